package gpu

// Blocks and thread goroutines of native mode. Each worker of RunNative owns
// one block value with one goroutine per thread, and runs grid blocks through
// them one after another, so goroutines, warps, barrier state and shared
// memory are allocated once per worker, not once per block.

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// block is one worker's block: the indices of the grid block it is running
// now, its threads and everything they share.
type block struct {
	ctaid, ntid, nctaid Dim3

	l       *launch
	threads []thread
	warps   []warp
	bar     rendezvous // Sync and block reductions: every thread of the block
	red     []uint64   // block reduction inputs, by linear thread id
	redOut  uint64     // block reduction result
	shared  sharedMem

	// running counts threads that are neither parked at a rendezvous nor
	// finished. When it drops to zero while some thread is parked, no
	// thread can ever complete a rendezvous again: the block is stuck.
	running atomic.Int32
	exited  atomic.Int32 // threads that finished the current block
	aborted atomic.Bool  // the block failed: parked threads must unwind

	done    sync.WaitGroup // threads still running the current block
	serving sync.WaitGroup // thread goroutines still alive
}

// thread is one GPU thread: a goroutine that runs the kernel once for every
// block its worker runs.
type thread struct {
	blk    *block
	tid    Dim3
	linear int
	lane   int
	warp   *warp

	start chan struct{} // a token per block to run; closed to end the goroutine
	wake  chan struct{} // a token means "re-check what you are waiting for"
	wait  waitInfo      // the rendezvous call the thread last arrived at
	goid  int64         // the goroutine's id, to find it in stack dumps
}

// abortUnwind is the panic value that unwinds a thread of a failed block; it
// is not itself an error.
type abortUnwind struct{}

func newBlock(l *launch) *block {
	b := &block{ntid: l.block, nctaid: l.grid, l: l}
	n := l.nthreads
	b.threads = make([]thread, n)
	b.warps = make([]warp, (n+WarpSize-1)/WarpSize)
	for w := range b.warps {
		b.warps[w].init(w, min(WarpSize, n-w*WarpSize))
	}
	b.bar.init(-1, n)
	b.red = make([]uint64, n)
	b.shared.dyn = alloc16(l.dynBytes)
	bx, by := l.block.X, l.block.Y
	for i := range b.threads {
		th := &b.threads[i]
		th.blk, th.linear = b, i
		th.tid = Dim3{X: i % bx, Y: i / bx % by, Z: i / (bx * by)}
		th.lane, th.warp = i%WarpSize, &b.warps[i/WarpSize]
		th.start = make(chan struct{}, 1)
		th.wake = make(chan struct{}, 1)
	}
	return b
}

// runBlocks starts the thread goroutines, then runs blocks taken from the
// launch's counter until none are left or the launch has failed.
func (b *block) runBlocks() {
	b.serving.Add(len(b.threads))
	for i := range b.threads {
		go b.threads[i].serve()
	}
	defer func() {
		for i := range b.threads {
			close(b.threads[i].start)
		}
		b.serving.Wait()
	}()
	for !b.l.failed.Load() {
		i := b.l.next.Add(1) - 1
		if i >= int64(b.l.nblocks) {
			return
		}
		b.reset(int(i))
		b.done.Add(len(b.threads))
		for j := range b.threads {
			b.threads[j].start <- struct{}{}
		}
		b.done.Wait()
		if b.l.coop {
			b.l.gbar.blockDone()
		}
	}
}

// reset prepares the block to run grid block i.
func (b *block) reset(i int) {
	gx, gy := b.nctaid.X, b.nctaid.Y
	b.ctaid = Dim3{X: i % gx, Y: i / gx % gy, Z: i / (gx * gy)}
	b.running.Store(int32(len(b.threads)))
	b.exited.Store(0)
	b.aborted.Store(false)
	b.bar.reset()
	for w := range b.warps {
		b.warps[w].rv.reset()
	}
	b.shared.zero()
	for i := range b.threads {
		select {
		case <-b.threads[i].wake:
		default:
		}
	}
}

func (th *thread) serve() {
	defer th.blk.serving.Done()
	th.goid = goroutineID()
	for range th.start {
		th.run()
	}
}

// run runs the kernel for the thread's current block and accounts for how
// it ended: returned, panicked, or left through runtime.Goexit.
func (th *thread) run() {
	returned := false
	defer func() {
		if !returned {
			th.failed(recover())
		}
		th.exit()
	}()
	th.blk.l.kernel(Thread{th})
	returned = true
}

// failed handles a thread that did not return from the kernel: p is the
// recovered panic value, nil after runtime.Goexit. It must be called from
// the deferred function, while the panicking stack is still in place.
func (th *thread) failed(p any) {
	b := th.blk
	if _, ok := p.(abortUnwind); ok {
		return
	}
	if b.l.failed.Load() {
		b.abort(nil)
		return
	}
	e := &PanicError{Block: b.ctaid, Thread: th.tid, Value: p}
	if p == nil {
		e.Value = "runtime.Goexit called in a kernel"
	}
	e.File, e.Line = panicPosition()
	e.Stack = string(debug.Stack())
	b.abort(e)
}

// exit accounts for a thread that has finished its block.
func (th *thread) exit() {
	b := th.blk
	b.exited.Add(1)
	if b.running.Add(-1) == 0 && int(b.exited.Load()) < len(b.threads) {
		b.stuck()
	}
	b.done.Done()
}

// abort fails the launch with err (nil: it has already failed) and wakes
// every parked thread of the block so that it unwinds.
func (b *block) abort(err error) {
	if err != nil {
		b.l.fail(err)
	}
	b.aborted.Store(true)
	for i := range b.threads {
		b.threads[i].notify()
	}
}

// notify leaves a wake-up token for th unless one is already there.
func (th *thread) notify() {
	select {
	case th.wake <- struct{}{}:
	default:
	}
}

// panicPosition returns the source position of a panic being recovered:
// the innermost frame outside package gpu and the Go runtime.
func panicPosition() (string, int) {
	var pcs [64]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !isInternal(f.Function) {
			return f.File, f.Line
		}
		if !more {
			return "", 0
		}
	}
}
