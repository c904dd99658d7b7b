package qwen3

// The paged KV cache. Keys (after QK-norm and RoPE) and values are kept
// per layer in one pool of fixed-size pages, float32
// [pages·pageSize, kv_heads, head_dim], or on the ops path (UseOps) in the
// weights' 16-bit type [pages, pageSize, kv_heads, hd] with hd the head
// dimension padded to 64 or 128 (ops.PagedAttention's layout, written by
// ops.KVCacheWrite); a sequence owns a list of pages
// (its page table), so sequences of any length share one pool without
// fragmenting it, and a batched step attends each row over its own
// sequence's pages (attentionPaged in kernels.go). Position j of a
// sequence lives in slot pages[j/pageSize]·pageSize + j%pageSize.

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// DefaultPageSize is the positions per page: small enough that a short
// sequence wastes little, large enough that page tables stay short.
const DefaultPageSize = 16

// KVPool is the K and V storage of many sequences. Its methods are safe
// for concurrent use; a forward pass must not run concurrently with
// another on the same pool.
type KVPool struct {
	k, v     []*kern.Buffer[float32]      // per layer [Pages·PageSize, kvDim]
	kb, vb   []*kern.Buffer[gpu.BFloat16] // the ops path's, per layer
	kh, vh   []*kern.Buffer[gpu.Half]
	hd       int // the ops path's padded head dimension; 0 for float32
	PageSize int
	Pages    int
	kvDim    int
	mu       sync.Mutex
	free     []int32
}

// NewKVPool allocates pages of pageSize positions for every layer.
func (m *Model) NewKVPool(pages, pageSize int) (*KVPool, error) {
	if pages <= 0 || pageSize <= 0 {
		return nil, fmt.Errorf("qwen3: KV pool of %d pages of %d positions: want both > 0", pages, pageSize)
	}
	p := &KVPool{PageSize: pageSize, Pages: pages, kvDim: m.Config.KVDim()}
	if m.ops != nil {
		if err := m.ops.allocPool(m, p); err != nil {
			p.Free()
			return nil, err
		}
	}
	n := pages * pageSize * p.kvDim
	for l := 0; l < m.Config.NumHiddenLayers && m.ops == nil; l++ {
		k, err := kern.Alloc[float32](m.dev, n)
		if err != nil {
			p.Free()
			return nil, fmt.Errorf("qwen3: KV cache layer %d (%d MB): %w", l, 2*n*4>>20, err)
		}
		v, err := kern.Alloc[float32](m.dev, n)
		if err != nil {
			k.Free()
			p.Free()
			return nil, fmt.Errorf("qwen3: KV cache layer %d (%d MB): %w", l, 2*n*4>>20, err)
		}
		p.k = append(p.k, k)
		p.v = append(p.v, v)
	}
	for i := pages - 1; i >= 0; i-- {
		p.free = append(p.free, int32(i))
	}
	return p, nil
}

// FreePages is the number of pages no sequence holds.
func (p *KVPool) FreePages() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}

// Free releases the pool's device memory.
func (p *KVPool) Free() {
	for i := range p.k {
		p.k[i].Free()
		p.v[i].Free()
	}
	freeAll(p.kb)
	freeAll(p.vb)
	freeAll(p.kh)
	freeAll(p.vh)
	p.k, p.v, p.kb, p.vb, p.kh, p.vh = nil, nil, nil, nil, nil, nil
}

func freeAll[T gpu.Elem](bs []*kern.Buffer[T]) {
	for _, b := range bs {
		if b != nil {
			b.Free()
		}
	}
}

// ErrPoolFull is returned (wrapped) when a sequence cannot get pages.
var ErrPoolFull = errors.New("KV cache pool is full")

// Seq is one sequence's place in a pool: its pages and its length.
type Seq struct {
	pool  *KVPool
	pages []int32
	Len   int // positions filled
}

// NewSeq starts an empty sequence in p.
func (p *KVPool) NewSeq() *Seq { return &Seq{pool: p} }

// Cap is the positions the sequence's pages hold.
func (s *Seq) Cap() int { return len(s.pages) * s.pool.PageSize }

// Reserve makes room for n positions in all, taking pages from the pool.
func (s *Seq) Reserve(n int) error {
	need := (n+s.pool.PageSize-1)/s.pool.PageSize - len(s.pages)
	if need <= 0 {
		return nil
	}
	p := s.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if need > len(p.free) {
		return fmt.Errorf("qwen3: %w: %d positions need %d more pages, %d are free", ErrPoolFull, n, need, len(p.free))
	}
	s.pages = append(s.pages, p.free[len(p.free)-need:]...)
	p.free = p.free[:len(p.free)-need]
	return nil
}

// Release returns the sequence's pages to the pool and empties it.
func (s *Seq) Release() {
	p := s.pool
	p.mu.Lock()
	p.free = append(p.free, s.pages...)
	p.mu.Unlock()
	s.pages, s.Len = nil, 0
}

// slot is the cache slot of position j.
func (s *Seq) slot(j int) int32 {
	return s.pages[j/s.pool.PageSize]*int32(s.pool.PageSize) + int32(j%s.pool.PageSize)
}

// Cache is a single sequence with a pool of its own: what Forward and a
// one-request-at-a-time caller use.
type Cache struct {
	*Seq
	Cap int // positions allocated
}

// NewCache allocates a cache for up to capacity positions (at most
// max_position_embeddings).
func (m *Model) NewCache(capacity int) (*Cache, error) {
	if capacity <= 0 {
		return nil, fmt.Errorf("qwen3: cache capacity %d, want > 0", capacity)
	}
	if mp := m.Config.MaxPositionEmbeddings; mp > 0 && capacity > mp {
		return nil, fmt.Errorf("qwen3: cache capacity %d exceeds max_position_embeddings = %d", capacity, mp)
	}
	pool, err := m.NewKVPool((capacity+DefaultPageSize-1)/DefaultPageSize, DefaultPageSize)
	if err != nil {
		return nil, err
	}
	s := pool.NewSeq()
	if err := s.Reserve(capacity); err != nil {
		pool.Free()
		return nil, err
	}
	return &Cache{Seq: s, Cap: capacity}, nil
}

// Reset empties the cache for a new sequence (the memory is kept).
func (c *Cache) Reset() { c.Len = 0 }

// Free releases the cache's device memory.
func (c *Cache) Free() { c.pool.Free() }
