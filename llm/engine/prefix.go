package engine

// The prefix cache: full KV pages are kept after their request ends,
// keyed by a hash of their tokens chained through every page before
// them, so a later request whose prompt starts with the same pages reuses
// them and prefills only the rest.
//
// A block is one KV page (qwen3.DefaultPageSize positions). Its hash is
// SHA-256 over its parent block's hash and its token ids, cut to 64 bits:
// equal hashes mean equal token prefixes (up to collisions at 2⁻⁶⁴), which
// is what makes a block's cached K and V valid for another request, since
// they depend on every earlier token. The chain is the one vLLM's KV-cache
// events carry (BlockStored's parent_block_hash), so a router can follow
// it (kvevents.go).
//
// Ownership: a cached block is held by the requests that matched it
// (ref) and, once none does, sits in an LRU list from which the pool
// takes pages back when it runs short. The KV pool knows nothing of this;
// sequences with shared pages are Detached, never Released. Blocks are
// stored when their request ends, so two requests running at once do not
// share a prefix that neither has finished.

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/gokern/kern/llm/qwen3"
)

// KVEvent is a change to the prefix cache, in the shape of vLLM's
// KV-cache events (vllm/distributed/kv_events.py).
type KVEvent struct {
	Kind KVEventKind
	// Hashes are the blocks stored or removed; a BlockStored event's
	// blocks chain, the first one's parent being Parent.
	Hashes    []uint64
	Parent    uint64
	HasParent bool
	Tokens    []int32 // BlockStored: the blocks' tokens, BlockSize each
	BlockSize int
}

// KVEventKind names a KVEvent.
type KVEventKind uint8

const (
	BlockStored KVEventKind = iota
	BlockRemoved
	AllBlocksCleared
)

type cblock struct {
	hash    uint64
	page    int32
	ref     int
	dropped bool          // removed from the index while held (reset)
	elem    *list.Element // in lru while ref == 0
}

type prefixCache struct {
	pool  *qwen3.KVPool
	bs    int
	off   bool            // caching disabled: nothing is matched or stored
	on    func([]KVEvent) // called with the lock held, from the caller's goroutine
	mu    sync.Mutex
	index map[uint64]*cblock
	lru   *list.List // of *cblock with ref == 0, oldest at the front
	idle  atomic.Int64
}

func newPrefixCache(pool *qwen3.KVPool, on func([]KVEvent)) *prefixCache {
	return &prefixCache{pool: pool, bs: pool.PageSize, on: on, index: map[uint64]*cblock{}, lru: list.New()}
}

// blockHashes returns the chained hashes of tokens' full blocks.
func blockHashes(tokens []int32, bs int) []uint64 {
	out := make([]uint64, 0, len(tokens)/bs)
	var parent uint64
	buf := make([]byte, 9+4*bs)
	for i := 0; i+bs <= len(tokens); i += bs {
		binary.LittleEndian.PutUint64(buf, parent)
		buf[8] = 0
		if i > 0 {
			buf[8] = 1 // a root block differs from a child of hash 0
		}
		for k, t := range tokens[i : i+bs] {
			binary.LittleEndian.PutUint32(buf[9+4*k:], uint32(t))
		}
		sum := sha256.Sum256(buf)
		parent = binary.BigEndian.Uint64(sum[:8])
		out = append(out, parent)
	}
	return out
}

// admit makes a sequence for prompt with room for n positions: the
// longest run of cached blocks that prefixes the prompt (leaving at least
// one prompt token to prefill, whose logits sample the first token) is
// shared, the rest comes from the pool, evicting idle cached blocks if
// the pool is short. It returns the sequence, the blocks it holds, and
// the prompt tokens already in the cache. Without match, the prompt
// shares no blocks (it is prefilled whole).
func (c *prefixCache) admit(prompt []int32, n int, match bool) (*qwen3.Seq, []*cblock, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var hashes []uint64
	if !c.off && match {
		hashes = blockHashes(prompt[:len(prompt)-1], c.bs)
	}
	var held []*cblock
	for _, h := range hashes {
		b := c.index[h]
		if b == nil {
			break
		}
		c.hold(b)
		held = append(held, b)
	}
	pages := make([]int32, len(held))
	for i, b := range held {
		pages[i] = b.page
	}
	seq, err := c.pool.AdoptSeq(pages, len(held)*c.bs)
	if err == nil {
		need := (n+c.bs-1)/c.bs - len(pages)
		if short := need - c.pool.FreePages(); short > 0 {
			c.evict(short)
		}
		err = seq.Reserve(n)
	}
	if err != nil {
		seq.Detach()
		c.unhold(held)
		return nil, nil, 0, err
	}
	return seq, held, len(held) * c.bs, nil
}

func (c *prefixCache) hold(b *cblock) {
	if b.ref == 0 && b.elem != nil {
		c.lru.Remove(b.elem)
		b.elem = nil
		c.idle.Add(-1)
	}
	b.ref++
}

// unhold drops a request's hold on blocks; an idle block joins the LRU
// list (or, if a reset dropped it, goes back to the pool).
func (c *prefixCache) unhold(bs []*cblock) {
	for _, b := range bs {
		b.ref--
		if b.ref > 0 {
			continue
		}
		if b.dropped {
			c.pool.Give([]int32{b.page})
			continue
		}
		b.elem = c.lru.PushBack(b)
		c.idle.Add(1)
	}
}

// evict gives up to n idle blocks, oldest first, back to the pool.
func (c *prefixCache) evict(n int) {
	var gone []uint64
	for ; n > 0 && c.lru.Len() > 0; n-- {
		b := c.lru.Remove(c.lru.Front()).(*cblock)
		b.elem = nil
		c.idle.Add(-1)
		delete(c.index, b.hash)
		c.pool.Give([]int32{b.page})
		gone = append(gone, b.hash)
	}
	if len(gone) > 0 && c.on != nil {
		c.on([]KVEvent{{Kind: BlockRemoved, Hashes: gone}})
	}
}

// release ends a request's sequence: tokens are the positions its pages
// hold (seq.Len of them). Its full blocks that the cache lacks are stored;
// the rest of its pages go back to the pool.
func (c *prefixCache) release(seq *qwen3.Seq, held []*cblock, tokens []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tokens = tokens[:min(len(tokens), seq.Len)]
	pages := seq.Detach()
	c.unhold(held)
	var hashes []uint64
	if !c.off {
		hashes = blockHashes(tokens, c.bs)
	}
	var free []int32
	ev := KVEvent{Kind: BlockStored, BlockSize: c.bs}
	flush := func() {
		if len(ev.Hashes) > 0 && c.on != nil {
			c.on([]KVEvent{ev})
		}
		ev = KVEvent{Kind: BlockStored, BlockSize: c.bs}
	}
	for i, p := range pages {
		switch {
		case i < len(held):
			// shared: the cache's, not ours
		case i < len(hashes) && c.index[hashes[i]] == nil:
			b := &cblock{hash: hashes[i], page: p}
			c.index[b.hash] = b
			b.elem = c.lru.PushBack(b)
			c.idle.Add(1)
			if len(ev.Hashes) == 0 && i > 0 {
				ev.Parent, ev.HasParent = hashes[i-1], true
			}
			ev.Hashes = append(ev.Hashes, b.hash)
			ev.Tokens = append(ev.Tokens, tokens[i*c.bs:(i+1)*c.bs]...)
		default:
			flush() // a gap breaks the chain of one event
			free = append(free, p)
		}
	}
	flush()
	c.pool.Give(free)
}

// reset forgets every cached block: idle ones go back to the pool, held
// ones when their requests end.
func (c *prefixCache) reset() error {
	if c.off {
		return errNoPrefixCache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.index {
		if b.elem != nil {
			c.lru.Remove(b.elem)
			b.elem = nil
			c.pool.Give([]int32{b.page})
		} else {
			b.dropped = true
		}
	}
	c.index = map[uint64]*cblock{}
	c.idle.Store(0)
	if c.on != nil {
		c.on([]KVEvent{{Kind: AllBlocksCleared}})
	}
	return nil
}

var errNoPrefixCache = errors.New("engine: prefix caching is off")
