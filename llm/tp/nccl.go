package tp

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/nccl"
)

// NCCL is a Comm over package nccl on a CUDA device: collectives are
// queued on the queue's CUDA stream and return at once, as launches do,
// so a decode step stays one stream of work (and can be captured in a
// CUDA graph, NCCL collectives being capturable).
type NCCL struct {
	c       *nccl.Comm
	dev     *kern.Device
	barrier *kern.Buffer[float32]
}

// NewNCCL joins dev's rank of size to the clique id names (every rank
// calls it, at the same time, with the id rank 0 made with
// nccl.GetUniqueID; Rendezvous hands it over between processes). It
// blocks until all have joined.
func NewNCCL(dev *kern.Device, id nccl.UniqueID, rank, size int) (*NCCL, error) {
	_, ctx, err := kern.CUDAStream(dev)
	if err != nil {
		return nil, fmt.Errorf("tp: NCCL rank %d: %w", rank, err)
	}
	b, err := kern.Alloc[float32](dev, 1)
	if err != nil {
		return nil, fmt.Errorf("tp: NCCL rank %d: %w", rank, err)
	}
	var c *nccl.Comm
	err = ctx.Do(func() (err error) { c, err = nccl.CommInitRank(size, id, rank); return })
	if err != nil {
		b.Free()
		return nil, fmt.Errorf("tp: NCCL rank %d of %d: %w", rank, size, err)
	}
	return &NCCL{c: c, dev: dev, barrier: b}, nil
}

func (n *NCCL) Rank() int { return n.c.Rank() }
func (n *NCCL) Size() int { return n.c.Size() }

// on runs fn with q's stream in its context, naming op in errors.
func (n *NCCL) on(op string, q kern.Queue, fn func(s cuda.Stream) error) error {
	s, ctx, err := kern.CUDAStream(q)
	if err == nil {
		err = ctx.Do(func() error { return fn(s) })
	}
	if err != nil {
		return fmt.Errorf("tp: %s on rank %d: %w", op, n.c.Rank(), err)
	}
	return nil
}

func ptr[T gpu.Elem](b *kern.Buffer[T]) (cuda.DevicePtr, error) {
	p, _, err := kern.CUDAPointer(b)
	return p, err
}

// AllReduceSumF32 implements Comm.
func (n *NCCL) AllReduceSumF32(q kern.Queue, b *kern.Buffer[float32]) error {
	return allReduceNCCL(n, "AllReduceSumF32", q, b, nccl.Float32)
}

// AllReduceSumBF16 implements Comm.
func (n *NCCL) AllReduceSumBF16(q kern.Queue, b *kern.Buffer[gpu.BFloat16]) error {
	return allReduceNCCL(n, "AllReduceSumBF16", q, b, nccl.BFloat16)
}

func allReduceNCCL[T gpu.Elem](n *NCCL, op string, q kern.Queue, b *kern.Buffer[T], t nccl.DataType) error {
	return n.on(op, q, func(s cuda.Stream) error {
		p, err := ptr(b)
		if err != nil {
			return err
		}
		return n.c.AllReduce(p, p, b.Len(), t, nccl.Sum, s)
	})
}

// AllGatherF32 implements Comm.
func (n *NCCL) AllGatherF32(q kern.Queue, out, in *kern.Buffer[float32]) error {
	return n.on("AllGatherF32", q, func(s cuda.Stream) error {
		if out.Len() != n.Size()*in.Len() {
			return fmt.Errorf("out has %d elements, want %d ranks × %d", out.Len(), n.Size(), in.Len())
		}
		pi, err := ptr(in)
		if err != nil {
			return err
		}
		po, err := ptr(out)
		if err != nil {
			return err
		}
		return n.c.AllGather(pi, po, in.Len(), nccl.Float32, s)
	})
}

// BroadcastF32 implements Comm.
func (n *NCCL) BroadcastF32(q kern.Queue, b *kern.Buffer[float32], root int) error {
	return broadcastNCCL(n, "BroadcastF32", q, b, nccl.Float32, root)
}

// BroadcastInt32 implements Comm.
func (n *NCCL) BroadcastInt32(q kern.Queue, b *kern.Buffer[int32], root int) error {
	return broadcastNCCL(n, "BroadcastInt32", q, b, nccl.Int32, root)
}

func broadcastNCCL[T gpu.Elem](n *NCCL, op string, q kern.Queue, b *kern.Buffer[T], t nccl.DataType, root int) error {
	return n.on(op, q, func(s cuda.Stream) error {
		p, err := ptr(b)
		if err != nil {
			return err
		}
		return n.c.Broadcast(p, p, b.Len(), t, root, s)
	})
}

// Barrier implements Comm: a one-element all-reduce on the default
// stream, waited for, so it also waits for this rank's queued work.
func (n *NCCL) Barrier() error {
	if err := n.AllReduceSumF32(n.dev, n.barrier); err != nil {
		return err
	}
	return n.dev.Sync()
}

// Abort aborts the NCCL communicator (nccl.Comm.Abort): a collective
// that another goroutine waits in, for a rank that is gone, fails instead
// of waiting forever. The communicator is unusable afterwards; Close only
// frees what is left. It runs outside the context's Do, which the waiting
// goroutine may hold.
func (n *NCCL) Abort() error {
	if err := n.c.Abort(); err != nil {
		return fmt.Errorf("tp: Abort on rank %d: %w", n.c.Rank(), err)
	}
	return nil
}

// Close implements Comm: it destroys the NCCL communicator.
func (n *NCCL) Close() error {
	_, ctx, err := kern.CUDAStream(n.dev)
	if err == nil && !n.c.Aborted() {
		err = ctx.Do(n.c.Destroy)
	}
	n.barrier.Free()
	if err != nil {
		return fmt.Errorf("tp: Close on rank %d: %w", n.c.Rank(), err)
	}
	return nil
}

var _ Comm = (*NCCL)(nil)
var _ Comm = (*Local)(nil)
