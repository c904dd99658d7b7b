package gpu

// Native mode: the runtime that runs a kernel's own Go function on the CPU,
// one goroutine per GPU thread. RunNative is its entry point; the host
// package kern calls it with a closure that passes the kernel's arguments.
//
// # What native mode promises
//
//   - Every thread of every block runs the kernel exactly once (unless the
//     launch fails first), with the indices (ThreadIdx, BlockIdx,
//     LinearIdx, Lane, Warp) a GPU would give it. Threads are numbered
//     x fastest; warps are consecutive groups of 32 linear ids, and a
//     block whose size is not a multiple of 32 has a partial last warp.
//   - Barriers (Sync, SyncWarp), warp collectives (shuffles, Ballot, Any,
//     All, WarpSum...), block reductions, MMA and LdMatrix are rendezvous of
//     the threads that take part: nobody continues until all have arrived,
//     and every write made before the rendezvous is visible after it.
//   - Atomics are atomic across all goroutines of the launch.
//   - Results are deterministic unless the kernel itself races (two threads
//     writing one cell without an atomic or barrier between them).
//   - A kernel bug is an error, never a crash or a hang: a panic in any
//     thread (an index out of range, a nil dereference, an explicit panic)
//     stops the launch and comes back as a *PanicError naming the block, the
//     thread and the kernel's source line; a barrier that can never complete
//     comes back as a *BarrierError (see native_rendezvous.go for the rules).
//
// # Where it differs from a GPU
//
//   - Scheduling: blocks run concurrently, up to GOMAXPROCS at a time, in no
//     fixed order, and the threads of a block are goroutines scheduled by Go,
//     not warps in lock step. Code that relies on implicit warp-synchronous
//     execution (no SyncWarp between a write and another lane's read) is
//     racy here as it is on Volta and later GPUs. A block that spins until
//     another block sets a flag can wait forever when that block has not
//     started (as on a GPU without a cooperative launch).
//   - Barriers are stricter than bar.sync: all threads of the block must
//     reach the same Sync call. A thread that returns while others wait at a
//     Sync is an error here (on a GPU exited threads stop counting), and so
//     are threads meeting at different Sync sites (a GPU would let them
//     pass each other). Both are bugs that the compiler's uniformity check
//     or the emulator's synccheck reports as well.
//   - Shared memory (Shared, DynShared) starts zeroed in every block; on a
//     GPU its contents are undefined until written.
//   - cp.async copies immediately (CpAsync returns after the bytes are in
//     place); CpAsyncCommit and CpAsyncWait do nothing. A kernel that reads
//     the destination before waiting is wrong on a GPU but works here.
//   - Atomics are sequentially consistent (sync/atomic), stronger than the
//     relaxed atom.* of the GPU; floating-point atomics add in whatever
//     order the goroutines arrive, as on a GPU.
//   - Math is Go's math package rounded once to the result type; MMA
//     accumulates in a documented fixed order (native_mma.go).
//   - Blocks are limited to 1024 threads, as on every NVIDIA GPU; grid
//     limits are left to the host runtime.
//   - Partial warps (a block size that is not a multiple of 32) are
//     defined: shuffles from a missing lane return the caller's own value,
//     missing lanes vote false (so All is false), and block reductions work
//     for any block size. MMA and LdMatrix need a full warp and panic in a
//     partial one.
//
// The runtime is split by concept: native_block.go (blocks, thread
// goroutines, panics), native_rendezvous.go (the meeting point every
// collective is built on, deadlock detection), native_barrier.go (Sync and
// block reductions), native_warp.go (warp collectives), native_shared.go,
// native_atomic.go, native_float.go (fma32, Half, BFloat16), native_mma.go
// (MMA, LdMatrix), native_async.go (cp.async) and native_site.go (source
// positions of call sites).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// MaxBlockThreads is the largest block RunNative accepts, the limit of
// every NVIDIA GPU.
const MaxBlockThreads = 1024

// RunNative runs kernel once for every thread of a grid of grid blocks of
// block threads each, with dynSharedBytes bytes of dynamic shared memory
// per block (see DynShared). Zero dimensions are treated as 1.
//
// It returns when every thread has finished, or when the launch has failed:
// the error is a *PanicError when a thread panicked and a *BarrierError when
// a block's threads could not all meet at a barrier or warp collective.
// After a failure no new blocks start; blocks already running stop at their
// next collective operation.
func RunNative(grid, block Dim3, dynSharedBytes int, kernel func(Thread)) error {
	return RunNativeContext(context.Background(), grid, block, dynSharedBytes, kernel)
}

// ErrAbandoned is wrapped by RunNativeContext's error when the context
// ended while some threads were still running kernel code that calls no
// collective: Go cannot stop a goroutine from outside, so those threads
// run on in the background, and the memory they use must not be reused.
var ErrAbandoned = errors.New("threads still running were abandoned")

// abandonGrace is how long a cancelled launch waits for its threads to
// unwind (they stop at their next collective) before abandoning them.
const abandonGrace = 500 * time.Millisecond

// RunNativeContext is RunNative stopped when ctx is done: no block starts
// after that, and threads waiting at a barrier or warp collective, or
// arriving at one, unwind. The error wraps ctx.Err(), and ErrAbandoned as
// well when threads that call no collective were still running.
func RunNativeContext(ctx context.Context, grid, block Dim3, dynSharedBytes int, kernel func(Thread)) error {
	return runNative(ctx, grid, block, dynSharedBytes, kernel, false)
}

// RunNativeCooperative is RunNativeContext for a kernel that calls
// GridSync: every block of the grid runs at once, on a worker of its own,
// as a GPU keeps every block of a cooperative launch resident. A block
// that returns before a GridSync the others wait at makes the launch fail
// with a *BarrierError ("grid barrier divergence").
func RunNativeCooperative(ctx context.Context, grid, block Dim3, dynSharedBytes int, kernel func(Thread)) error {
	return runNative(ctx, grid, block, dynSharedBytes, kernel, true)
}

func runNative(ctx context.Context, grid, block Dim3, dynSharedBytes int, kernel func(Thread), coop bool) error {
	grid, block = dimOrOne(grid), dimOrOne(block)
	if kernel == nil {
		return errors.New("gpu.RunNative: nil kernel")
	}
	if grid.X < 0 || grid.Y < 0 || grid.Z < 0 {
		return fmt.Errorf("gpu.RunNative: negative grid %s", fmtDim(grid))
	}
	if block.X < 0 || block.Y < 0 || block.Z < 0 {
		return fmt.Errorf("gpu.RunNative: negative block %s", fmtDim(block))
	}
	if dynSharedBytes < 0 {
		return fmt.Errorf("gpu.RunNative: negative dynamic shared memory size %d", dynSharedBytes)
	}
	nthreads, ok := volume(block)
	if !ok || nthreads > MaxBlockThreads {
		return fmt.Errorf("gpu.RunNative: block %s has more than %d threads", fmtDim(block), MaxBlockThreads)
	}
	nblocks, ok := volume(grid)
	if !ok {
		return fmt.Errorf("gpu.RunNative: grid %s has too many blocks", fmtDim(grid))
	}

	l := &launch{
		grid:     grid,
		block:    block,
		nblocks:  nblocks,
		nthreads: nthreads,
		dynBytes: dynSharedBytes,
		kernel:   kernel,
		coop:     coop,
	}
	l.gbar.init()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("launch not started: %w", err)
	}
	workers := min(runtime.GOMAXPROCS(0), nblocks)
	if coop {
		workers = nblocks
	}
	var wg sync.WaitGroup
	for range workers {
		b := newBlock(l)
		l.blocks = append(l.blocks, b)
		wg.Go(b.runBlocks)
	}
	if ctx.Done() == nil {
		wg.Wait()
		return l.err()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
		return l.err()
	case <-ctx.Done():
	}
	l.fail(fmt.Errorf("launch stopped: %w", ctx.Err()))
	for _, b := range l.blocks {
		b.abort(nil)
	}
	select {
	case <-finished:
		return l.err()
	case <-time.After(abandonGrace):
		return fmt.Errorf("launch stopped: %w; %w (a thread loops without calling into package gpu)", ctx.Err(), ErrAbandoned)
	}
}

// launch is the state one RunNative call shares between its workers.
type launch struct {
	grid, block Dim3
	nblocks     int
	nthreads    int // threads per block
	dynBytes    int
	kernel      func(Thread)

	next   atomic.Int64 // index of the next block to run
	failed atomic.Bool  // set once first is set: stop starting blocks

	mu    sync.Mutex
	first error // the launch's error: the first failure reported

	blocks []*block // one per worker, for cancelling

	// coop is set by RunNativeCooperative: every block has a worker, and
	// GridSync meets at gbar (native_grid.go).
	coop bool
	gbar gridBarrier
}

// fail records err as the launch's error unless an earlier failure was
// recorded, and tells every worker to stop.
func (l *launch) fail(err error) {
	l.mu.Lock()
	if l.first == nil {
		l.first = err
	}
	l.mu.Unlock()
	l.failed.Store(true)
	if l.coop {
		l.gbar.wake()
	}
}

func (l *launch) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first
}

func dimOrOne(d Dim3) Dim3 {
	if d.X == 0 {
		d.X = 1
	}
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// volume returns d.X*d.Y*d.Z for non-negative d, and false when the product
// overflows an int.
func volume(d Dim3) (int, bool) {
	v := 1
	for _, n := range [3]int{d.X, d.Y, d.Z} {
		if v > math.MaxInt/max(n, 1) {
			return 0, false
		}
		v *= n
	}
	return v, true
}

func fmtDim(d Dim3) string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }
