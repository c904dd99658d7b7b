package tp

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// Local is an in-process communicator: ranks are goroutines, each with
// its own kern device (any kind), and collectives move data through host
// memory. Every rank reduces in rank order 0, 1, …, Size-1, so all ranks
// get bitwise the same result, as NCCL's ring all-reduce also ensures.
// It is the reference for the model's tests and runs where there is no
// GPU; it is not fast.
type Local struct {
	g      *group
	rank   int
	closed bool
}

// NewLocal returns the n ranks of a fresh in-process clique.
func NewLocal(n int) ([]*Local, error) {
	if n < 1 {
		return nil, fmt.Errorf("tp: a clique of %d ranks", n)
	}
	g := &group{n: n, slots: make([]any, n)}
	g.cond = sync.NewCond(&g.mu)
	ranks := make([]*Local, n)
	for r := range ranks {
		ranks[r] = &Local{g: g, rank: r}
	}
	return ranks, nil
}

// ErrAborted is matched by every collective's error after Abort.
var ErrAborted = errors.New("tp: communicator aborted")

// group is the clique's meeting point: a reusable barrier (arrivals
// counted per generation) and one slot per rank for what it brings.
type group struct {
	n       int
	mu      sync.Mutex
	cond    *sync.Cond
	arrived int
	gen     uint64
	err     error
	slots   []any
}

// barrier waits for every rank; it fails once the group is aborted.
// Called with g.mu held.
func (g *group) barrier() error {
	if g.err != nil {
		return g.err
	}
	gen := g.gen
	if g.arrived++; g.arrived == g.n {
		g.arrived = 0
		g.gen++
		g.cond.Broadcast()
		return nil
	}
	for g.gen == gen && g.err == nil {
		g.cond.Wait()
	}
	if g.gen == gen {
		return g.err
	}
	return nil
}

// exchange publishes v as rank's contribution and returns every rank's,
// by rank. The second barrier keeps a fast rank's next exchange from
// overwriting a slot before the others have read it.
func (g *group) exchange(rank int, v any) ([]any, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.slots[rank] = v
	if err := g.barrier(); err != nil {
		return nil, err
	}
	all := append([]any(nil), g.slots...)
	if err := g.barrier(); err != nil {
		return nil, err
	}
	return all, nil
}

// Abort fails every pending and later collective of the clique with
// ErrAborted wrapping err: what a rank that failed between collectives
// calls, so the others do not wait for it forever.
func (c *Local) Abort(err error) {
	g := c.g
	g.mu.Lock()
	if g.err == nil {
		g.err = fmt.Errorf("%w: rank %d: %v", ErrAborted, c.rank, err)
	}
	g.cond.Broadcast()
	g.mu.Unlock()
}

// Reset clears an Abort, so the clique can run collectives again. Only
// call it when no rank is inside a collective (Model does, once every
// rank's goroutine of a failed step has returned).
func (c *Local) Reset() {
	g := c.g
	g.mu.Lock()
	g.err, g.arrived = nil, 0
	g.gen++
	for i := range g.slots {
		g.slots[i] = nil
	}
	g.mu.Unlock()
}

func (c *Local) Rank() int { return c.rank }
func (c *Local) Size() int { return c.g.n }

func (c *Local) check(op string) error {
	if c.closed {
		return fmt.Errorf("tp: %s on rank %d: the communicator is closed", op, c.rank)
	}
	return nil
}

// AllReduceSumF32 implements Comm.
func (c *Local) AllReduceSumF32(q kern.Queue, b *kern.Buffer[float32]) error {
	return allReduce(c, "AllReduceSumF32", b, func(x float32) float32 { return x }, func(x float32) float32 { return x })
}

// AllReduceSumBF16 implements Comm: the sum is accumulated in float32 and
// rounded once, as NCCL's bf16 reduction does per ring step for two ranks.
func (c *Local) AllReduceSumBF16(q kern.Queue, b *kern.Buffer[gpu.BFloat16]) error {
	return allReduce(c, "AllReduceSumBF16", b, gpu.BFloat16.Float32, gpu.ToBFloat16)
}

func allReduce[T gpu.Elem](c *Local, op string, b *kern.Buffer[T], toF func(T) float32, fromF func(float32) T) error {
	if err := c.check(op); err != nil {
		return err
	}
	mine, err := b.Download()
	if err != nil {
		return fmt.Errorf("tp: %s on rank %d: %w", op, c.rank, err)
	}
	all, err := c.g.exchange(c.rank, mine)
	if err != nil {
		return fmt.Errorf("tp: %s on rank %d: %w", op, c.rank, err)
	}
	out := make([]T, len(mine))
	for i := range out {
		var s float32
		for r, v := range all {
			xs := v.([]T)
			if len(xs) != len(mine) {
				return fmt.Errorf("tp: %s on rank %d: rank %d brought %d elements, this rank %d", op, c.rank, r, len(xs), len(mine))
			}
			s += toF(xs[i])
		}
		out[i] = fromF(s)
	}
	return b.CopyFrom(out)
}

// AllGatherF32 implements Comm.
func (c *Local) AllGatherF32(q kern.Queue, out, in *kern.Buffer[float32]) error {
	const op = "AllGatherF32"
	if err := c.check(op); err != nil {
		return err
	}
	if out.Len() != c.g.n*in.Len() {
		return fmt.Errorf("tp: %s on rank %d: out has %d elements, want %d ranks × %d", op, c.rank, out.Len(), c.g.n, in.Len())
	}
	mine, err := in.Download()
	if err != nil {
		return fmt.Errorf("tp: %s on rank %d: %w", op, c.rank, err)
	}
	all, err := c.g.exchange(c.rank, mine)
	if err != nil {
		return fmt.Errorf("tp: %s on rank %d: %w", op, c.rank, err)
	}
	cat := make([]float32, 0, out.Len())
	for r, v := range all {
		xs := v.([]float32)
		if len(xs) != len(mine) {
			return fmt.Errorf("tp: %s on rank %d: rank %d brought %d elements, this rank %d", op, c.rank, r, len(xs), len(mine))
		}
		cat = append(cat, xs...)
	}
	return out.CopyFrom(cat)
}

// BroadcastF32 implements Comm.
func (c *Local) BroadcastF32(q kern.Queue, b *kern.Buffer[float32], root int) error {
	return broadcast(c, "BroadcastF32", b, root)
}

// BroadcastInt32 implements Comm.
func (c *Local) BroadcastInt32(q kern.Queue, b *kern.Buffer[int32], root int) error {
	return broadcast(c, "BroadcastInt32", b, root)
}

func broadcast[T gpu.Elem](c *Local, op string, b *kern.Buffer[T], root int) error {
	if err := c.check(op); err != nil {
		return err
	}
	if root < 0 || root >= c.g.n {
		return fmt.Errorf("tp: %s on rank %d: root %d of %d ranks", op, c.rank, root, c.g.n)
	}
	var mine []T
	if c.rank == root {
		var err error
		if mine, err = b.Download(); err != nil {
			return fmt.Errorf("tp: %s on rank %d: %w", op, c.rank, err)
		}
	}
	all, err := c.g.exchange(c.rank, mine)
	if err != nil {
		return fmt.Errorf("tp: %s on rank %d: %w", op, c.rank, err)
	}
	if c.rank == root {
		return nil
	}
	xs := all[root].([]T)
	if len(xs) != b.Len() {
		return fmt.Errorf("tp: %s on rank %d: root %d sent %d elements into a buffer of %d", op, c.rank, root, len(xs), b.Len())
	}
	return b.CopyFrom(xs)
}

// Barrier implements Comm.
func (c *Local) Barrier() error {
	if err := c.check("Barrier"); err != nil {
		return err
	}
	_, err := c.g.exchange(c.rank, nil)
	return err
}

// Close implements Comm.
func (c *Local) Close() error {
	if err := c.check("Close"); err != nil {
		return err
	}
	c.closed = true
	return nil
}
