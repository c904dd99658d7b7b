package cuda

import "unsafe"

// Events: markers in a stream, for timing and cross-stream ordering. They
// need a current context.

// EventCreate creates an event.
func EventCreate(flags EventFlags) (Event, error) {
	d := current()
	var e Event
	if err := d.call(&d.cuEventCreate, uintptr(unsafe.Pointer(&e)), uintptr(flags)); err != nil {
		return 0, err
	}
	return e, nil
}

// Record captures the point in s's queue the event marks.
func (e Event) Record(s Stream) error {
	d := current()
	return d.call(&d.cuEventRecord, uintptr(e), uintptr(s))
}

// Synchronize waits until the work before the event's record has finished.
func (e Event) Synchronize() error {
	d := current()
	return d.call(&d.cuEventSynchronize, uintptr(e))
}

// Query reports whether the work before the event's record has finished.
func (e Event) Query() (done bool, err error) {
	d := current()
	r, err := d.raw(&d.cuEventQuery, uintptr(e))
	switch {
	case err != nil:
		return false, err
	case r == Success:
		return true, nil
	case r == ErrorNotReady:
		return false, nil
	}
	return false, d.newError(d.cuEventQuery.Name, r)
}

// Destroy destroys the event.
func (e Event) Destroy() error {
	d := current()
	return d.call(&d.cuEventDestroy, uintptr(e))
}

// EventElapsedTime returns the time in milliseconds between two recorded,
// completed events (resolution about half a microsecond). Both must be
// created without EventDisableTiming.
func EventElapsedTime(start, end Event) (float32, error) {
	d := current()
	var ms float32
	if err := d.call(&d.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), uintptr(start), uintptr(end)); err != nil {
		return 0, err
	}
	return ms, nil
}
