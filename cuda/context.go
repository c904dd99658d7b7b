package cuda

import (
	"runtime"
	"unsafe"
)

// Contexts and threads.
//
// The driver keeps the current context per OS thread, and every call that
// allocates, copies, loads or launches uses the calling thread's current
// context. Go moves goroutines between OS threads at any call, so a
// goroutine that sets a context current and then calls MemAlloc may run the
// second call on a thread where some other context, or none, is current
// (CUDA_ERROR_INVALID_CONTEXT). Context.Do closes that gap: it locks the
// goroutine to its thread, makes the context current there, and runs the
// function; everything the function calls runs on that thread.
//
// Do leaves the context current on the thread when it finds no context
// current before, so the next Do on the same thread is a single
// cuCtxGetCurrent. When another context was current it is restored, so Do
// calls for different contexts nest.

// PrimaryCtxRetain retains the device's primary context, the one the CUDA
// runtime also uses, creating it on first use. Balance with Release.
func PrimaryCtxRetain(dev Device) (Context, error) {
	d := current()
	var c Context
	if err := d.call(&d.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&c)), uintptr(dev)); err != nil {
		return 0, err
	}
	return c, nil
}

// PrimaryCtxRelease releases one reference to the device's primary context;
// the last release destroys it, with every allocation and module in it.
func PrimaryCtxRelease(dev Device) error {
	d := current()
	return d.call(&d.cuDevicePrimaryCtxRelease, uintptr(dev))
}

// PrimaryCtxReset destroys the device's primary context now, whoever holds it.
func PrimaryCtxReset(dev Device) error {
	d := current()
	return d.call(&d.cuDevicePrimaryCtxReset, uintptr(dev))
}

// PrimaryCtxSetFlags sets the flags (scheduling policy) the primary context
// is created with; it must be called before the context is active.
func PrimaryCtxSetFlags(dev Device, flags ContextFlags) error {
	d := current()
	return d.call(&d.cuDevicePrimaryCtxSetFlags, uintptr(dev), uintptr(flags))
}

// Release releases a primary context obtained from PrimaryCtxRetain. The
// calling thread is left without c current, since c may now be destroyed.
func (c Context) Release() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, err := CtxGetCurrent()
	if err != nil {
		return err
	}
	if err := CtxSetCurrent(c); err != nil {
		return err
	}
	d := current()
	var dev Device
	err = d.call(&d.cuCtxGetDevice, uintptr(unsafe.Pointer(&dev)))
	if prev == c {
		prev = 0
	}
	if serr := CtxSetCurrent(prev); err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	return PrimaryCtxRelease(dev)
}

// Device returns the device the context belongs to.
func (c Context) Device() (Device, error) {
	var dev Device
	err := c.Do(func() error {
		d := current()
		return d.call(&d.cuCtxGetDevice, uintptr(unsafe.Pointer(&dev)))
	})
	return dev, err
}

// Synchronize waits for all work in the context to finish and reports the
// first asynchronous error (a kernel fault) if there was one.
func (c Context) Synchronize() error { return c.Do(CtxSynchronize) }

// CtxSynchronize waits for all work in the calling thread's current context.
func CtxSynchronize() error {
	d := current()
	return d.call(&d.cuCtxSynchronize)
}

// CtxCreate creates a new (non-primary) context on dev. Most programs
// should use PrimaryCtxRetain instead; this is for isolation in tests and
// tools. The calling thread's current context is left unchanged.
func CtxCreate(dev Device, flags ContextFlags) (Context, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := current()
	var c Context
	if err := d.call(&d.cuCtxCreate, uintptr(unsafe.Pointer(&c)), uintptr(flags), uintptr(dev)); err != nil {
		return 0, err
	}
	// cuCtxCreate pushed c onto this thread's stack; pop it back off.
	var popped Context
	if err := d.call(&d.cuCtxPopCurrent, uintptr(unsafe.Pointer(&popped))); err != nil {
		return c, err
	}
	return c, nil
}

// Destroy destroys a context made by CtxCreate.
func (c Context) Destroy() error {
	d := current()
	return d.call(&d.cuCtxDestroy, uintptr(c))
}

// CtxGetCurrent returns the calling OS thread's current context (0 if
// none). Only meaningful with the goroutine locked to its thread.
func CtxGetCurrent() (Context, error) {
	d := current()
	f := getFrame()
	defer putFrame(f)
	f.args[0] = uintptr(unsafe.Pointer(&f.out[0]))
	r, err := d.callFrame(&d.cuCtxGetCurrent, f, 1)
	if err = d.check(&d.cuCtxGetCurrent, r, err); err != nil {
		return 0, err
	}
	return Context(f.out[0]), nil
}

// CtxSetCurrent makes c current on the calling OS thread. Only meaningful
// with the goroutine locked to its thread; prefer Do.
func CtxSetCurrent(c Context) error {
	d := current()
	f := getFrame()
	defer putFrame(f)
	f.args[0] = uintptr(c)
	r, err := d.callFrame(&d.cuCtxSetCurrent, f, 1)
	return d.check(&d.cuCtxSetCurrent, r, err)
}

// Do runs fn with the goroutine locked to its OS thread and c current on
// that thread. Call every function of this package that needs a context
// (memory, modules, launches, streams, events, graphs) inside Do. fn's
// error is returned as is. Do allocates nothing.
func (c Context) Do(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, err := CtxGetCurrent()
	if err != nil {
		return err
	}
	if prev != c {
		if err := CtxSetCurrent(c); err != nil {
			return err
		}
		if prev != 0 {
			defer func() { _ = CtxSetCurrent(prev) }()
		}
	}
	return fn()
}
