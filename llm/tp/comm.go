package tp

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// Comm is one rank's end of a communicator: a clique of Size ranks that
// call the same collectives in the same order. Collectives work on whole
// buffers and are queued on q like a launch (on the emulator and in
// native mode they complete before returning). A collective called by
// some ranks and not others blocks the callers; Local's Abort and NCCL's
// communicator teardown end such a wait.
type Comm interface {
	Rank() int
	Size() int
	// AllReduceSumF32 and AllReduceSumBF16 replace b, on every rank, by
	// the elementwise sum of every rank's b.
	AllReduceSumF32(q kern.Queue, b *kern.Buffer[float32]) error
	AllReduceSumBF16(q kern.Queue, b *kern.Buffer[gpu.BFloat16]) error
	// AllGatherF32 writes every rank's in, in rank order, into out
	// (Size × in.Len() elements) on every rank.
	AllGatherF32(q kern.Queue, out, in *kern.Buffer[float32]) error
	// BroadcastF32 and BroadcastInt32 copy root's b into every rank's b.
	BroadcastF32(q kern.Queue, b *kern.Buffer[float32], root int) error
	BroadcastInt32(q kern.Queue, b *kern.Buffer[int32], root int) error
	// Barrier returns once every rank has called it (and, for device
	// communicators, once the rank's queued collectives are done).
	Barrier() error
	// Close releases the rank's end; collectives after it fail.
	Close() error
}
