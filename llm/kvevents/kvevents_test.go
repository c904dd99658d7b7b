package kvevents

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/engine"
)

// decode is a msgpack decoder for the test: nil, bool, ints (as int64
// or uint64), float64, str, bin, arrays.
func decode(b []byte) (any, []byte, error) {
	if len(b) == 0 {
		return nil, nil, io.ErrUnexpectedEOF
	}
	c, b := b[0], b[1:]
	be := binary.BigEndian
	need := func(n int) error {
		if len(b) < n {
			return io.ErrUnexpectedEOF
		}
		return nil
	}
	arr := func(n int, b []byte) (any, []byte, error) {
		out := make([]any, n)
		for i := range out {
			var err error
			if out[i], b, err = decode(b); err != nil {
				return nil, nil, err
			}
		}
		return out, b, nil
	}
	str := func(n int, b []byte) (any, []byte, error) {
		if len(b) < n {
			return nil, nil, io.ErrUnexpectedEOF
		}
		return string(b[:n]), b[n:], nil
	}
	switch {
	case c < 0x80:
		return int64(c), b, nil
	case c >= 0xe0:
		return int64(int8(c)), b, nil
	case c&0xf0 == 0x90:
		return arr(int(c&0x0f), b)
	case c&0xe0 == 0xa0:
		return str(int(c&0x1f), b)
	}
	switch c {
	case 0xc0:
		return nil, b, nil
	case 0xcc:
		if err := need(1); err != nil {
			return nil, nil, err
		}
		return int64(b[0]), b[1:], nil
	case 0xcd:
		if err := need(2); err != nil {
			return nil, nil, err
		}
		return int64(be.Uint16(b)), b[2:], nil
	case 0xce:
		if err := need(4); err != nil {
			return nil, nil, err
		}
		return int64(be.Uint32(b)), b[4:], nil
	case 0xcf:
		if err := need(8); err != nil {
			return nil, nil, err
		}
		return be.Uint64(b), b[8:], nil
	case 0xd0:
		if err := need(1); err != nil {
			return nil, nil, err
		}
		return int64(int8(b[0])), b[1:], nil
	case 0xd1:
		if err := need(2); err != nil {
			return nil, nil, err
		}
		return int64(int16(be.Uint16(b))), b[2:], nil
	case 0xd2:
		if err := need(4); err != nil {
			return nil, nil, err
		}
		return int64(int32(be.Uint32(b))), b[4:], nil
	case 0xd3:
		if err := need(8); err != nil {
			return nil, nil, err
		}
		return int64(be.Uint64(b)), b[8:], nil
	case 0xcb:
		if err := need(8); err != nil {
			return nil, nil, err
		}
		return math.Float64frombits(be.Uint64(b)), b[8:], nil
	case 0xd9:
		if err := need(1); err != nil {
			return nil, nil, err
		}
		return str(int(b[0]), b[1:])
	case 0xda:
		if err := need(2); err != nil {
			return nil, nil, err
		}
		return str(int(be.Uint16(b)), b[2:])
	case 0xdc:
		if err := need(2); err != nil {
			return nil, nil, err
		}
		return arr(int(be.Uint16(b)), b[2:])
	case 0xdd:
		if err := need(4); err != nil {
			return nil, nil, err
		}
		return arr(int(be.Uint32(b)), b[4:])
	}
	return nil, nil, fmt.Errorf("msgpack: code %#x not handled by the test decoder", c)
}

func TestMsgpackInts(t *testing.T) {
	for _, v := range []int64{0, 1, 127, 128, 255, 256, 65535, 65536, 1 << 32, math.MaxInt64, -1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64} {
		b := appendInt(nil, v)
		got, rest, err := decode(b)
		if err != nil || len(rest) != 0 || fmt.Sprint(got) != fmt.Sprint(v) {
			t.Errorf("%d: encoded % x decodes to %v (%v, %d left)", v, b, got, err, len(rest))
		}
	}
	if got, _, _ := decode(appendUint(nil, math.MaxUint64)); got != uint64(math.MaxUint64) {
		t.Errorf("max uint64 decodes to %v", got)
	}
	long := string(make([]byte, 300))
	if got, _, _ := decode(appendStr(nil, long)); got != long {
		t.Error("300-byte string does not round-trip")
	}
}

// sub is a ZMTP 3.0 SUB client for the test.
type sub struct {
	c net.Conn
	r *bufio.Reader
}

func dialSub(t *testing.T, addr string) *sub {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return subHandshake(t, c)
}

// subHandshake runs the SUB side of the handshake on c and subscribes to
// every topic.
func subHandshake(t *testing.T, c net.Conn) *sub {
	t.Helper()
	t.Cleanup(func() { c.Close() })
	s := &sub{c: c, r: bufio.NewReader(c)}
	g := make([]byte, 64)
	g[0], g[9], g[10] = 0xff, 0x7f, 3
	copy(g[12:], "NULL")
	w := bufio.NewWriter(c)
	w.Write(g)
	ready := append([]byte{5}, "READY"...)
	writeFrame(w, appendProperty(ready, "Socket-Type", "SUB"), false, true)
	writeFrame(w, []byte{1}, false, false) // subscribe to every topic
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	pg := make([]byte, 64)
	if _, err := io.ReadFull(s.r, pg); err != nil || pg[0] != 0xff || pg[10] != 3 {
		t.Fatalf("greeting % x: %v", pg, err)
	}
	body, flags, err := readFrame(s.r)
	if name, props, _ := command(body); err != nil || flags&flagCommand == 0 || name != "READY" || property(props, "socket-type") != "PUB" {
		t.Fatalf("READY: % x %v", body, err)
	}
	return s
}

func (s *sub) recv(t *testing.T) [][]byte {
	t.Helper()
	s.c.SetReadDeadline(time.Now().Add(60 * time.Second))
	var msg [][]byte
	for {
		body, flags, err := readFrame(s.r)
		if err != nil {
			t.Fatal(err)
		}
		msg = append(msg, body)
		if flags&flagMore == 0 {
			return msg
		}
	}
}

// waitSubscribed waits until the publisher has n peers with a subscription.
func waitSubscribed(t *testing.T, s *PubSocket, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		k := 0
		for p := range s.peers {
			p.mu.Lock()
			if len(p.subs) > 0 {
				k++
			}
			p.mu.Unlock()
		}
		s.mu.Unlock()
		if k >= n {
			return
		}
	}
	t.Fatalf("no %d subscribed peers", n)
}

// TestEngineEvents: a real engine's prefix cache, published on a PUB
// socket and read by a SUB peer, decodes into vLLM's shapes.
func TestEngineEvents(t *testing.T) {
	pub, err := NewPublisher("tcp://*:0", "kv@kern") // "*": bound, as vLLM's default
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	s := dialSub(t, fmt.Sprintf("127.0.0.1:%d", pub.Socket().Addr().(*net.TCPAddr).Port))
	waitSubscribed(t, pub.Socket(), 1)

	e, err := engine.Open(kern.OpenEmulator(), fixture.Model(t, "tiny-qwen3-tied"),
		engine.Options{TokenizerDir: fixture.Tokenizer(t), OnKVEvents: pub.Publish})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	prompt := make([]int32, 40)
	for i := range prompt {
		prompt[i] = int32(3 + 5*i)
	}
	ctx := context.Background()
	r1, err := e.Generate(ctx, engine.Request{Prompt: prompt, MaxTokens: 9})
	if err != nil {
		t.Fatal(err)
	}
	// 40 prompt + 8 forwarded generated positions: three full blocks.
	msg := s.recv(t)
	if len(msg) != 3 || string(msg[0]) != "kv@kern" || binary.BigEndian.Uint64(msg[1]) != 0 {
		t.Fatalf("message frames %q", msg)
	}
	batch, rest, err := decode(msg[2])
	if err != nil || len(rest) != 0 {
		t.Fatalf("EventBatch: %v, %d bytes left", err, len(rest))
	}
	b := batch.([]any)
	if ts, ok := b[0].(float64); len(b) != 2 || !ok || math.Abs(ts-float64(time.Now().Unix())) > 3600 {
		t.Fatalf("EventBatch %v: want [ts, events]", b)
	}
	evs := b[1].([]any)
	if len(evs) != 1 {
		t.Fatalf("events %v", evs)
	}
	st := evs[0].([]any)
	if len(st) != 7 || st[0] != "BlockStored" || st[2] != nil || st[4] != int64(16) || st[5] != nil || st[6] != "GPU" {
		t.Fatalf("BlockStored %v", st)
	}
	hashes := st[1].([]any)
	toks := st[3].([]any)
	all := append(slices.Clone(prompt), r1.Tokens...)
	if len(hashes) != 3 || len(toks) != 48 {
		t.Fatalf("BlockStored of %d hashes, %d tokens; want 3 and 48", len(hashes), len(toks))
	}
	for i, x := range toks {
		if x != int64(all[i]) {
			t.Fatalf("token_ids[%d] = %v, want %d", i, x, all[i])
		}
	}

	// The same prompt again: a cache hit, and a second BlockStored (if
	// any) chains from a stored block.
	r2, err := e.Generate(ctx, engine.Request{Prompt: prompt, MaxTokens: 9})
	if err != nil {
		t.Fatal(err)
	}
	if r2.CachedTokens != 32 || !slices.Equal(r2.Tokens, r1.Tokens) {
		t.Errorf("repeat: %d cached, tokens %v vs %v", r2.CachedTokens, r2.Tokens, r1.Tokens)
	}
	if err := e.ResetPrefixCache(); err != nil {
		t.Fatal(err)
	}
	msg = s.recv(t)
	if binary.BigEndian.Uint64(msg[1]) != 1 {
		t.Errorf("sequence %d, want 1", binary.BigEndian.Uint64(msg[1]))
	}
	batch, _, err = decode(msg[2])
	if err != nil {
		t.Fatal(err)
	}
	if ev := batch.([]any)[1].([]any); len(ev) != 1 || !slices.Equal(ev[0].([]any), []any{"AllBlocksCleared"}) {
		t.Errorf("after reset: %v, want [[AllBlocksCleared]]", ev)
	}
}

// TestBlockRemovedShape encodes each event kind and checks the layout.
func TestBlockRemovedShape(t *testing.T) {
	b := EncodeBatch(time.Unix(1700000000, 500e6), []engine.KVEvent{
		{Kind: engine.BlockStored, Hashes: []uint64{1 << 63, 7}, Parent: 42, HasParent: true, Tokens: []int32{1, 2, 3, 4}, BlockSize: 2},
		{Kind: engine.BlockRemoved, Hashes: []uint64{1 << 63}},
		{Kind: engine.AllBlocksCleared},
	})
	v, rest, err := decode(b)
	if err != nil || len(rest) != 0 {
		t.Fatal(err)
	}
	want := fmt.Sprint([]any{1700000000.5, []any{
		[]any{"BlockStored", []any{uint64(1 << 63), int64(7)}, int64(42), []any{int64(1), int64(2), int64(3), int64(4)}, int64(2), nil, "GPU"},
		[]any{"BlockRemoved", []any{uint64(1 << 63)}, "GPU"},
		[]any{"AllBlocksCleared"},
	}})
	if fmt.Sprint(v) != want {
		t.Errorf("decoded %v\nwant    %v", v, want)
	}
}

// TestDialPub: with a host in the endpoint the publisher connects to a
// binding subscriber (llm-d's endpoint picker binds), and connects again
// after the link drops.
func TestDialPub(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pub, err := NewPublisher("tcp://"+ln.Addr().String(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if pub.Socket().Addr() != nil {
		t.Error("a dialing socket reports a listening address")
	}
	for round := range 2 {
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		s := subHandshake(t, c)
		waitSubscribed(t, pub.Socket(), 1)
		pub.Publish([]engine.KVEvent{{Kind: engine.AllBlocksCleared}})
		msg := s.recv(t)
		b, _, err := decode(msg[2])
		if err != nil || len(msg) != 3 || fmt.Sprint(b.([]any)[1]) != "[[AllBlocksCleared]]" {
			t.Fatalf("round %d: %q %v %v", round, msg, b, err)
		}
		c.Close() // the publisher must dial again
		for deadline := time.Now().Add(30 * time.Second); pub.Socket().Subscribers() > 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the publisher kept a dropped peer")
			}
		}
	}
}
