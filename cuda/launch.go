package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Launch queues fn on stream s with the given grid and block shape (in
// blocks and threads), sharedBytes of dynamic shared memory and the kernel
// arguments in args (nil for a kernel without parameters). It needs the
// context fn was loaded in to be current (see Context.Do).
//
// Launch returns once the launch is queued; a fault inside the kernel is
// reported by a later synchronizing call, unless KERN_CUDA_DEBUG=sync is
// set, which makes Launch synchronize and report it.
//
// With a reused Args, Launch allocates nothing.
func Launch(fn Function, grid, block [3]uint32, sharedBytes uint32, s Stream, args *Args) error {
	d := current()
	var params uintptr
	if args != nil && args.n > 0 {
		forceHeap(uintptr(unsafe.Pointer(args)))
		params = args.pointers()
	}
	f := getFrame()
	f.args = [len(f.args)]uintptr{
		uintptr(fn),
		uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
		uintptr(sharedBytes), uintptr(s), params, 0, // extra = NULL
	}
	r, err := d.callFrame(&d.cuLaunchKernel, f, 11)
	putFrame(f)
	runtime.KeepAlive(args)
	return d.launched(&d.cuLaunchKernel, r, err, "", s, grid, block, sharedBytes, args)
}

// launched finishes a launch call p returned r (and err) for: the error
// with the launch's shape, and KERN_CUDA_DEBUG's logging and sync. what
// is added to the shape in an error (the launch's attributes).
func (d *driver) launched(p *proc, r Result, err error, what string, s Stream, grid, block [3]uint32, sharedBytes uint32, args *Args) error {
	if err = d.check(p, r, err); err != nil {
		if e, ok := err.(*Error); ok {
			e.Log = launchShape(grid, block, sharedBytes, args) + what
		}
		return err
	}
	if d.debug != debugOff && args != nil {
		d.logf("cuda:   kernel params %s\n", args)
	}
	if d.debug == debugSync {
		return d.syncAfterLaunch(s, grid, block, sharedBytes, args)
	}
	return nil
}

func launchShape(grid, block [3]uint32, sharedBytes uint32, args *Args) string {
	n := 0
	if args != nil {
		n = args.n
	}
	return fmt.Sprintf("launch grid=%v block=%v shared=%d params=%d", grid, block, sharedBytes, n)
}

// syncAfterLaunch implements KERN_CUDA_DEBUG=sync: wait for the context and
// blame a failure on the launch. A stream being captured into a graph must
// not be synchronized, so capture skips the check.
func (d *driver) syncAfterLaunch(s Stream, grid, block [3]uint32, sharedBytes uint32, args *Args) error {
	if d.cuStreamIsCapturing.Addr != 0 {
		var status CaptureStatus
		if err := d.call(&d.cuStreamIsCapturing, uintptr(s), uintptr(unsafe.Pointer(&status))); err != nil || status != CaptureStatusNone {
			return err
		}
	}
	err := d.call(&d.cuCtxSynchronize)
	if e, ok := err.(*Error); ok {
		e.Call = d.cuLaunchKernel.Name
		e.Log = launchShape(grid, block, sharedBytes, args) + "; fault reported by cuCtxSynchronize after the launch (" + DebugEnv + "=sync)"
	}
	return err
}

// logf writes a debug line.
func (d *driver) logf(format string, a ...any) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	if d.logw != nil {
		fmt.Fprintf(d.logw, format, a...)
	}
}
