package cuda

import (
	"sync"

	"github.com/ebitengine/purego"
)

// Allocation-free calls for the hot path.
//
// call (call.go) costs one allocation for its variadic argument slice plus
// one per out-parameter, because //go:uintptrescapes moves them to the heap.
// Context.Do and Launch run for every kernel launch, so they use a frame
// instead: a pooled heap object holding the argument array and the
// out-parameter slots. Heap objects never move, and the frame is reachable
// from the goroutine for the whole call, so the uintptrs into it stay valid.
//
// Only frame memory and memory forced onto the heap by forceHeap may be
// passed this way; a pointer to a caller's variable must go through call,
// whose //go:uintptrescapes is what keeps that variable off the stack.

type frame struct {
	args [12]uintptr
	out  [2]uint64
}

var frames = sync.Pool{New: func() any { return new(frame) }}

func getFrame() *frame { return frames.Get().(*frame) }

func putFrame(f *frame) {
	*f = frame{}
	frames.Put(f)
}

// callFrame invokes p with f.args[:n] and returns its CUresult; the error is
// non-nil only when p is unavailable.
func (d *driver) callFrame(p *proc, f *frame, n int) (Result, error) {
	if p.Addr == 0 {
		return 0, d.unavailable(p)
	}
	r, _, _ := purego.SyscallN(p.Addr, f.args[:n]...)
	res := cuResult(r)
	if d.debug != debugOff {
		d.logCall(p.Name, f.args[:n], res)
	}
	return res, nil
}

// check converts the result of callFrame into an error.
func (d *driver) check(p *proc, r Result, err error) error {
	if err != nil || r == Success {
		return err
	}
	return d.newError(p.Name, r)
}

// forceHeap exists for its directive: passing uintptr(unsafe.Pointer(x))
// makes the compiler allocate *x on the heap at every caller, so a pointer
// into *x may then be stored in a frame as a uintptr.
//
//go:uintptrescapes
//go:noinline
func forceHeap(uintptr) {}
