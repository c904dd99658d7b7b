// Package zmq4check tests kern's hand-written ZMTP PUB socket and msgpack
// encoder (llm/kvevents) against independent implementations: a
// go-zeromq/zmq4 SUB socket and the vmihailenco/msgpack decoder. It is a
// module of its own so that kern's module does not depend on them; run
// it with `cd llm/kvevents/testdata/zmq4check && go test`.
package zmq4check

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/gokern/kern/llm/engine"
	"github.com/gokern/kern/llm/kvevents"
)

func TestZmq4Subscriber(t *testing.T) {
	pub, err := kvevents.NewPublisher("tcp://*:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sub := zmq4.NewSub(ctx)
	defer sub.Close()
	if err := sub.Dial(fmt.Sprintf("tcp://127.0.0.1:%d", pub.Socket().Addr().(*net.TCPAddr).Port)); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	events := []engine.KVEvent{
		{Kind: engine.BlockStored, Hashes: []uint64{0xfedcba9876543210, 12}, Parent: 99, HasParent: true,
			Tokens: []int32{1, 2, 300, 70000}, BlockSize: 2},
		{Kind: engine.BlockRemoved, Hashes: []uint64{12}},
		{Kind: engine.AllBlocksCleared},
	}
	// The subscription reaches the publisher some time after Dial: publish
	// until a batch arrives.
	got := make(chan zmq4.Msg, 1)
	go func() {
		m, err := sub.Recv()
		if err != nil {
			t.Error(err)
		}
		got <- m
	}()
	var msg zmq4.Msg
wait:
	for {
		pub.Publish(events)
		select {
		case msg = <-got:
			break wait
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("no message")
		}
	}
	if len(msg.Frames) != 3 || len(msg.Frames[0]) != 0 || len(msg.Frames[1]) != 8 {
		t.Fatalf("frames %q, want [topic, seq, payload]", msg.Frames)
	}
	_ = binary.BigEndian.Uint64(msg.Frames[1])
	var batch []any
	if err := msgpack.Unmarshal(msg.Frames[2], &batch); err != nil {
		t.Fatal(err)
	}
	if len(batch) != 2 {
		t.Fatalf("batch %v", batch)
	}
	if _, ok := batch[0].(float64); !ok {
		t.Errorf("ts %T, want float64", batch[0])
	}
	evs := batch[1].([]any)
	if len(evs) != 3 {
		t.Fatalf("events %v", evs)
	}
	st := evs[0].([]any)
	if st[0] != "BlockStored" || len(st) != 7 || toU(st[1].([]any)[0]) != 0xfedcba9876543210 || toU(st[1].([]any)[1]) != 12 ||
		toU(st[2]) != 99 || toU(st[3].([]any)[3]) != 70000 || toU(st[4]) != 2 || st[5] != nil || st[6] != "GPU" {
		t.Errorf("BlockStored %v", st)
	}
	rm := evs[1].([]any)
	if rm[0] != "BlockRemoved" || len(rm) != 3 || toU(rm[1].([]any)[0]) != 12 || rm[2] != "GPU" {
		t.Errorf("BlockRemoved %v", rm)
	}
	if cl := evs[2].([]any); len(cl) != 1 || cl[0] != "AllBlocksCleared" {
		t.Errorf("AllBlocksCleared %v", cl)
	}
}

func toU(v any) uint64 {
	switch x := v.(type) {
	case uint64:
		return x
	case int64:
		return uint64(x)
	case uint8:
		return uint64(x)
	case int8:
		return uint64(x)
	case uint16:
		return uint64(x)
	case int16:
		return uint64(x)
	case uint32:
		return uint64(x)
	case int32:
		return uint64(x)
	}
	return 1<<64 - 1
}
