package kern

import (
	"context"
	"fmt"
	"time"
	"unsafe"
)

// Stream is an ordered queue of launches on a device. Launches on one
// stream run in order; launches on different streams may overlap on a GPU.
// The emulator and native mode run each launch to completion when it is
// made, so on them streams only order and time work.
type Stream struct {
	dev *Device
	s   any
	// capture, while non-nil, collects launches for a Graph (devices
	// without driver graphs).
	capture *[]*launch
	// capturing is set while Capture runs, whichever way it records.
	capturing bool
	// gridRegion is the capture's current region of grid barrier slots,
	// gridLeft of them not yet handed out (cooperative.go).
	gridRegion uint64
	gridLeft   int
	closed     bool
}

// streams is what a backend implements for streams, events and graphs.
type streams interface {
	newStream() (any, error)
	destroyStream(s any) error
	syncStream(s any) error
	// record returns an event marking the point the stream has reached.
	record(s any) (any, error)
	elapsed(start, end any) (time.Duration, error)
	destroyEvent(e any) error
	// beginCapture and endCapture bracket driver stream capture; devices
	// whose launches are synchronous return errNoDriverGraphs and the
	// Stream records launches itself.
	beginCapture(s any) error
	endCapture(s any) (any, error)
	launchGraph(g, s any) error
	destroyGraph(g any) error
}

// NewStream creates a stream on d.
func (d *Device) NewStream() (*Stream, error) {
	if err := d.usable(); err != nil {
		return nil, fmt.Errorf("kern: NewStream: %w", err)
	}
	s, err := d.b.newStream()
	if err != nil {
		return nil, fmt.Errorf("kern: NewStream: %w", err)
	}
	return &Stream{dev: d, s: s}, nil
}

func (s *Stream) device() *Device { return s.dev }

// Device returns the device the stream runs on.
func (s *Stream) Device() *Device                { return s.dev }
func (s *Stream) stream() any                    { return s.s }
func (s *Stream) launchContext() context.Context { return nil }

// Sync waits for the stream's launches and reports the first error,
// including failed device bounds checks.
func (s *Stream) Sync() error {
	if err := s.dev.usable(); err != nil {
		return fmt.Errorf("kern: stream: %w", err)
	}
	if s.capturing {
		return fmt.Errorf("kern: stream: Sync inside Capture: a capture records work, it does not run it")
	}
	if err := s.dev.b.syncStream(s.s); err != nil {
		return fmt.Errorf("kern: stream: %w", err)
	}
	return nil
}

// Close destroys the stream after its work finishes. After the device
// is closed it does nothing: closing the device released the stream.
func (s *Stream) Close() error {
	if s.closed || s.dev.closed.Load() {
		return nil
	}
	s.closed = true
	return s.dev.b.destroyStream(s.s)
}

// Event is a point in a stream's work, for timing.
type Event struct {
	dev *Device
	e   any
}

// Record marks the point the stream has reached.
func (s *Stream) Record() (*Event, error) {
	if err := s.dev.usable(); err != nil {
		return nil, fmt.Errorf("kern: Record: %w", err)
	}
	e, err := s.dev.b.record(s.s)
	if err != nil {
		return nil, fmt.Errorf("kern: Record: %w", err)
	}
	return &Event{dev: s.dev, e: e}, nil
}

// Close releases the event.
func (e *Event) Close() error {
	if e == nil || e.e == nil || e.dev.closed.Load() {
		return nil
	}
	err := e.dev.b.destroyEvent(e.e)
	e.e = nil
	return err
}

// Elapsed is the device time between two recorded events, waiting for
// end if needed.
func Elapsed(start, end *Event) (time.Duration, error) {
	if start == nil || end == nil || start.dev != end.dev {
		return 0, fmt.Errorf("kern: Elapsed: events must be recorded on one device")
	}
	if err := start.dev.usable(); err != nil {
		return 0, fmt.Errorf("kern: Elapsed: %w", err)
	}
	return start.dev.b.elapsed(start.e, end.e)
}

// Graph is a recorded sequence of launches replayed with one call: on a
// GPU a CUDA graph, which removes per-launch host overhead.
type Graph struct {
	dev      *Device
	g        any
	launches []*launch // devices without driver graphs
}

// Capture records the launches fn makes on s into a Graph instead of
// running them. Buffers and scalars are captured by value: a replay
// launches the same kernels on the same buffers.
func (s *Stream) Capture(fn func(s *Stream) error) (*Graph, error) {
	if s.capture != nil {
		return nil, fmt.Errorf("kern: Capture: the stream is already capturing")
	}
	if err := s.dev.usable(); err != nil {
		return nil, fmt.Errorf("kern: Capture: %w", err)
	}
	err := s.dev.b.beginCapture(s.s)
	driver := err == nil
	if !driver && err != errNoDriverGraphs {
		return nil, fmt.Errorf("kern: Capture: %w", err)
	}
	var recorded []*launch
	if !driver {
		s.capture = &recorded
	}
	s.capturing, s.gridLeft = true, 0
	ferr := fn(s)
	s.capture, s.capturing, s.gridLeft = nil, false, 0
	var g any
	if driver {
		var err error
		g, err = s.dev.b.endCapture(s.s)
		if err != nil && ferr == nil {
			ferr = err
		}
	}
	if ferr != nil {
		return nil, fmt.Errorf("kern: Capture: %w", ferr)
	}
	return &Graph{dev: s.dev, g: g, launches: recorded}, nil
}

// Launch replays the graph on s.
func (g *Graph) Launch(s *Stream) error {
	if s.dev != g.dev {
		return fmt.Errorf("kern: Graph.Launch: the graph belongs to %s, the stream to %s", g.dev.label(), s.dev.label())
	}
	if err := g.dev.usable(); err != nil {
		return fmt.Errorf("kern: Graph.Launch: %w", err)
	}
	if g.g != nil {
		return g.dev.b.launchGraph(g.g, s.s)
	}
	for _, l := range g.launches {
		if l.hostCopy != nil {
			if err := l.hostCopy(); err != nil {
				return fmt.Errorf("kern: graph: a host copy: %w", err)
			}
			continue
		}
		if err := g.dev.b.launch(l); err != nil {
			return fmt.Errorf("kern: graph: %s: %w", l.k.spec.Name, err)
		}
	}
	return nil
}

// Close releases the graph.
func (g *Graph) Close() error {
	if g.g != nil && !g.dev.closed.Load() {
		return g.dev.b.destroyGraph(g.g)
	}
	return nil
}

var errNoDriverGraphs = fmt.Errorf("no driver graphs")

// hostStreams implements streams for devices whose launches complete when
// they are made (emu, native): streams are ordering only, events are wall
// clock, and graphs are recorded by the Stream.
type hostStreams struct{}

// goHostMemory implements HostBuffer's part of backend for devices whose
// memory is the host's or whose copies complete when made (the emulator,
// native mode): Go memory, and a copy done at once.
type goHostMemory struct{}

func (goHostMemory) allocHost(bytes int) ([]byte, error) {
	words := make([]uint64, (bytes+7)/8) // 8-byte aligned for any element
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), bytes), nil
}

func (goHostMemory) freeHost([]byte) error { return nil }

func (hostStreams) newStream() (any, error)     { return nil, nil }
func (hostStreams) destroyStream(any) error     { return nil }
func (hostStreams) syncStream(any) error        { return nil }
func (hostStreams) record(any) (any, error)     { return time.Now(), nil }
func (hostStreams) beginCapture(any) error      { return errNoDriverGraphs }
func (hostStreams) endCapture(any) (any, error) { return nil, errNoDriverGraphs }
func (hostStreams) launchGraph(any, any) error  { return errNoDriverGraphs }
func (hostStreams) destroyGraph(any) error      { return nil }
func (hostStreams) destroyEvent(any) error      { return nil }
func (hostStreams) elapsed(a, b any) (time.Duration, error) {
	return b.(time.Time).Sub(a.(time.Time)), nil
}
