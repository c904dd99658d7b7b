package engine

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
)

type eventLog struct {
	mu sync.Mutex
	ev []KVEvent
}

func (l *eventLog) add(ev []KVEvent) { l.mu.Lock(); l.ev = append(l.ev, ev...); l.mu.Unlock() }
func (l *eventLog) take() []KVEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := l.ev
	l.ev = nil
	return ev
}

func openPrefix(t *testing.T, opt Options) *Engine {
	t.Helper()
	opt.TokenizerDir = fixture.Tokenizer(t)
	e, err := Open(kern.OpenEmulator(), fixture.Model(t, "tiny-qwen3-untied"), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func ramp(n, from int32) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = from + int32(i)*7%300
	}
	return p
}

// TestPrefixCacheHit: a second request sharing full blocks with a
// finished one reuses their KV: it reports them cached, runs fewer rows
// through the model, and produces the tokens an uncached engine does.
func TestPrefixCacheHit(t *testing.T) {
	var log eventLog
	e := openPrefix(t, Options{OnKVEvents: log.add})
	plain := openPrefix(t, Options{NoPrefixCache: true})
	bs := e.pool.PageSize
	ctx := context.Background()
	first := ramp(int32(2*bs+8), 5) // two full blocks and a partial one
	second := append(slices.Clone(first[:2*bs]), ramp(5, 400)...)
	const n = 12 // so that each request fills a block past its prompt

	gen := func(e *Engine, prompt []int32) (*Result, int64) {
		t.Helper()
		before := e.Stats().Forwarded
		res, err := e.Generate(ctx, Request{Prompt: prompt, MaxTokens: n})
		if err != nil {
			t.Fatal(err)
		}
		return res, e.Stats().Forwarded - before
	}
	r1, f1 := gen(e, first)
	if r1.CachedTokens != 0 || f1 != int64(len(first)+n-1) {
		t.Errorf("first request: cached %d, forwarded %d; want 0 and %d", r1.CachedTokens, f1, len(first)+n-1)
	}
	// It stored the full blocks of its prompt and generated tokens: one
	// chain, rooted (no parent).
	ev := log.take()
	held := (len(first) + n - 1) / bs
	want := blockHashes(append(slices.Clone(first), r1.Tokens...), bs)[:held]
	if len(ev) != 1 || ev[0].Kind != BlockStored || ev[0].HasParent || !slices.Equal(ev[0].Hashes, want) ||
		ev[0].BlockSize != bs || len(ev[0].Tokens) != held*bs || !slices.Equal(ev[0].Tokens[:2*bs], first[:2*bs]) {
		t.Errorf("events after the first request: %+v; want one BlockStored of %d blocks %x", ev, held, want)
	}

	r2, f2 := gen(e, second)
	p2, _ := gen(plain, second)
	if r2.CachedTokens != 2*bs {
		t.Errorf("second request: %d tokens cached, want %d", r2.CachedTokens, 2*bs)
	}
	if wantF := int64(len(second) - 2*bs + n - 1); f2 != wantF {
		t.Errorf("second request forwarded %d rows, want %d (prefill of the uncached tail only)", f2, wantF)
	}
	if !slices.Equal(r2.Tokens, p2.Tokens) {
		t.Errorf("with the cache %v, without %v", r2.Tokens, p2.Tokens)
	}
	// Its new blocks chain from the shared ones.
	if ev := log.take(); len(ev) != 1 || !ev[0].HasParent || ev[0].Parent != want[1] || len(ev[0].Hashes) != 1 {
		t.Errorf("second request's events %+v, want one BlockStored of one block with parent %x", ev, want[1])
	}

	// The first prompt again: identical tokens, from two cached blocks.
	r3, _ := gen(e, first)
	if r3.CachedTokens != 2*bs || !slices.Equal(r3.Tokens, r1.Tokens) {
		t.Errorf("repeat: cached %d tokens %v; want %d and %v", r3.CachedTokens, r3.Tokens, 2*bs, r1.Tokens)
	}
	if m := e.Metrics; m.PrefixHits.Load() != int64(4*bs) || m.PrefixQueries.Load() != int64(2*len(first)+len(second)) {
		t.Errorf("prefix metrics: hits %d queries %d", m.PrefixHits.Load(), m.PrefixQueries.Load())
	}
	if u := e.Stats().KVUsage; u != 0 {
		t.Errorf("KV usage %v when idle, want 0 (cached blocks count as free)", u)
	}

	log.take()
	if err := e.ResetPrefixCache(); err != nil {
		t.Fatal(err)
	}
	if ev := log.take(); len(ev) != 1 || ev[0].Kind != AllBlocksCleared {
		t.Errorf("reset events %+v, want AllBlocksCleared", ev)
	}
	if r4, _ := gen(e, first); r4.CachedTokens != 0 || !slices.Equal(r4.Tokens, r1.Tokens) {
		t.Errorf("after reset: cached %d tokens %v", r4.CachedTokens, r4.Tokens)
	}
	if err := plain.ResetPrefixCache(); err == nil {
		t.Error("reset with caching off: no error")
	}
}

// TestPrefixCacheEviction: when the pool runs short, idle cached blocks
// go back to it (oldest first) and BlockRemoved says which.
func TestPrefixCacheEviction(t *testing.T) {
	var log eventLog
	e := openPrefix(t, Options{OnKVEvents: log.add, Context: 64, KVPositions: 64})
	bs := e.pool.PageSize
	ctx := context.Background()
	a := ramp(int32(2*bs+1), 3)
	if _, err := e.Generate(ctx, Request{Prompt: a, MaxTokens: 1}); err != nil {
		t.Fatal(err)
	}
	stored := log.take()
	if len(stored) != 1 || len(stored[0].Hashes) != 2 {
		t.Fatalf("stored %+v, want 2 blocks", stored)
	}
	// A request that needs the whole pool evicts both.
	b := ramp(int32(3*bs), 200)
	res, err := e.Generate(ctx, Request{Prompt: b, MaxTokens: bs})
	if err != nil {
		t.Fatal(err)
	}
	if res.CachedTokens != 0 {
		t.Errorf("unrelated prompt: %d cached", res.CachedTokens)
	}
	var removed []uint64
	for _, ev := range log.take() {
		if ev.Kind == BlockRemoved {
			removed = append(removed, ev.Hashes...)
		}
	}
	if !slices.Equal(removed, stored[0].Hashes) {
		t.Errorf("removed %x, want %x", removed, stored[0].Hashes)
	}
	if r, _ := e.Generate(ctx, Request{Prompt: a, MaxTokens: 1}); r == nil || r.CachedTokens != 0 {
		t.Errorf("evicted prefix still reported cached: %+v", r)
	}
}
