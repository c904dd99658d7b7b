package gomlx

// The buffer pool. Every op allocates its output, and a graph frees its
// intermediates as it goes, so a training loop would allocate and free
// the same sizes on every step; on a GPU each allocation is a driver call
// (and kern.Alloc zeroes the memory). Freed buffers go back to a pool
// keyed by dtype and length, and alloc takes from it first, so after the
// first execution of a graph a loop allocates nothing (TestSteadyState
// counts). No kernel relies on zeroed outputs: each writes every element
// of its output (Pad and ScatterSum fill or copy first).

import (
	"sync"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// poolPerKey bounds the idle buffers kept per (dtype, length).
const poolPerKey = 8

type poolKey struct {
	dt dtypes.DType
	n  int
}

type pool struct {
	mu   sync.Mutex
	idle map[poolKey][]darray
}

// get returns an idle buffer of shape's dtype and size, if there is one.
func (p *pool) get(shape shapes.Shape) (darray, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := poolKey{shape.DType, shape.Size()}
	l := p.idle[k]
	if len(l) == 0 {
		return nil, false
	}
	a := l[len(l)-1]
	p.idle[k] = l[:len(l)-1]
	return a, true
}

// put keeps a for reuse, or frees it when its key's list is full.
func (p *pool) put(shape shapes.Shape, a darray) error {
	p.mu.Lock()
	k := poolKey{shape.DType, shape.Size()}
	if p.idle == nil {
		p.idle = map[poolKey][]darray{}
	}
	if len(p.idle[k]) < poolPerKey {
		p.idle[k] = append(p.idle[k], a)
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	return a.free()
}

// drain frees every idle buffer.
func (p *pool) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.idle {
		for _, a := range l {
			a.free()
		}
	}
	p.idle = nil
}

// release returns a buffer the backend no longer needs to the pool.
func (b *Backend) release(buf *Buffer) error {
	if buf.freed {
		return nil
	}
	buf.freed = true
	if b.finalized {
		return nil
	}
	return b.pool.put(buf.shape, buf.arr)
}
