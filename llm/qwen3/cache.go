package qwen3

// The KV cache of one sequence: per layer, the keys (after QK-norm and
// RoPE) and values of every position so far, float32
// [capacity, kv_heads, head_dim] row-major. A decode step appends one
// position and attends over all of them. (Contiguous per sequence; a
// paged cache shared by a batch is for the server's continuous batching.)

import (
	"fmt"

	"github.com/gokern/kern"
)

// Cache holds the K and V of a sequence's first Len positions.
type Cache struct {
	k, v  []*kern.Buffer[float32]
	Len   int // positions filled
	Cap   int // positions allocated
	kvDim int
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
	c := &Cache{Cap: capacity, kvDim: m.Config.KVDim()}
	for l := 0; l < m.Config.NumHiddenLayers; l++ {
		k, err := kern.Alloc[float32](m.dev, capacity*c.kvDim)
		if err != nil {
			c.Free()
			return nil, fmt.Errorf("qwen3: KV cache layer %d: %w", l, err)
		}
		v, err := kern.Alloc[float32](m.dev, capacity*c.kvDim)
		if err != nil {
			k.Free()
			c.Free()
			return nil, fmt.Errorf("qwen3: KV cache layer %d: %w", l, err)
		}
		c.k = append(c.k, k)
		c.v = append(c.v, v)
	}
	return c, nil
}

// Reset empties the cache for a new sequence (the memory is kept).
func (c *Cache) Reset() { c.Len = 0 }

// Free releases the cache's device memory.
func (c *Cache) Free() {
	for i := range c.k {
		c.k[i].Free()
		c.v[i].Free()
	}
	c.k, c.v = nil, nil
}
