package cuda

import "unsafe"

// Streams: ordered queues of work on the device. They need a current context.

// StreamCreate creates a stream.
func StreamCreate(flags StreamFlags) (Stream, error) {
	d := current()
	var s Stream
	if err := d.call(&d.cuStreamCreate, uintptr(unsafe.Pointer(&s)), uintptr(flags)); err != nil {
		return 0, err
	}
	return s, nil
}

// Synchronize waits until all work queued on s has finished and reports
// the first asynchronous error, if any.
func (s Stream) Synchronize() error {
	d := current()
	return d.call(&d.cuStreamSynchronize, uintptr(s))
}

// Query reports whether all work queued on s has finished, without waiting.
func (s Stream) Query() (done bool, err error) {
	d := current()
	r, err := d.raw(&d.cuStreamQuery, uintptr(s))
	switch {
	case err != nil:
		return false, err
	case r == Success:
		return true, nil
	case r == ErrorNotReady:
		return false, nil
	}
	return false, d.newError(d.cuStreamQuery.Name, r)
}

// WaitEvent makes later work on s wait until e has completed.
func (s Stream) WaitEvent(e Event) error {
	d := current()
	return d.call(&d.cuStreamWaitEvent, uintptr(s), uintptr(e), 0)
}

// Destroy destroys s once its queued work has finished; it returns at once.
func (s Stream) Destroy() error {
	d := current()
	return d.call(&d.cuStreamDestroy, uintptr(s))
}
