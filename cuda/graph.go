package cuda

import "unsafe"

// CUDA graphs by stream capture: work queued on a capturing stream is
// recorded instead of run; the resulting Graph is instantiated once and
// launched many times with one call each, which removes most of the
// per-kernel launch overhead of a fixed sequence. Capture must begin and
// end on the same OS thread, so do both inside one Context.Do (or with
// CaptureModeRelaxed).

// StreamBeginCapture starts capturing s. The legacy (zero) stream cannot
// be captured.
func StreamBeginCapture(s Stream, mode CaptureMode) error {
	d := current()
	return d.call(&d.cuStreamBeginCapture, uintptr(s), uintptr(mode))
}

// StreamEndCapture ends the capture of s and returns the captured graph.
func StreamEndCapture(s Stream) (Graph, error) {
	d := current()
	var g Graph
	if err := d.call(&d.cuStreamEndCapture, uintptr(s), uintptr(unsafe.Pointer(&g))); err != nil {
		return 0, err
	}
	return g, nil
}

// StreamIsCapturing reports the capture status of s.
func StreamIsCapturing(s Stream) (CaptureStatus, error) {
	d := current()
	var st CaptureStatus
	if err := d.call(&d.cuStreamIsCapturing, uintptr(s), uintptr(unsafe.Pointer(&st))); err != nil {
		return 0, err
	}
	return st, nil
}

// GraphInstantiate turns a graph into an executable graph (CUDA 11.4+).
func GraphInstantiate(g Graph, flags GraphInstantiateFlags) (GraphExec, error) {
	d := current()
	var x GraphExec
	if err := d.call(&d.cuGraphInstantiateWithFlags, uintptr(unsafe.Pointer(&x)), uintptr(g), uintptr(flags)); err != nil {
		return 0, err
	}
	return x, nil
}

// GraphLaunch queues the whole graph on s.
func GraphLaunch(x GraphExec, s Stream) error {
	d := current()
	return d.call(&d.cuGraphLaunch, uintptr(x), uintptr(s))
}

// Destroy destroys the graph; executable graphs made from it stay valid.
func (g Graph) Destroy() error {
	d := current()
	return d.call(&d.cuGraphDestroy, uintptr(g))
}

// Destroy destroys the executable graph.
func (x GraphExec) Destroy() error {
	d := current()
	return d.call(&d.cuGraphExecDestroy, uintptr(x))
}
