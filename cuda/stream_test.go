package cuda

import (
	"errors"
	"slices"
	"testing"
)

func TestStreamQueryAndEvents(t *testing.T) {
	ctx := stubContext(t)
	do(t, ctx, func() error {
		s, err := StreamCreate(StreamNonBlocking)
		if err != nil {
			return err
		}
		// NOT_READY is an answer, not an error.
		stub.setBusy(1)
		if done, err := s.Query(); done || err != nil {
			t.Errorf("busy stream: Query() = %v, %v; want false, nil", done, err)
		}
		if done, err := s.Query(); !done || err != nil {
			t.Errorf("idle stream: Query() = %v, %v; want true, nil", done, err)
		}

		start, err := EventCreate(EventDefault)
		if err != nil {
			return err
		}
		end, err := EventCreate(EventBlockingSync)
		if err != nil {
			return err
		}
		if _, err := EventElapsedTime(start, end); !errors.Is(err, ErrorInvalidHandle) {
			t.Errorf("elapsed time of unrecorded events: %v", err)
		}
		if err := start.Record(s); err != nil {
			return err
		}
		if err := end.Record(s); err != nil {
			return err
		}
		if err := end.Synchronize(); err != nil {
			return err
		}
		stub.setBusy(1)
		if done, err := end.Query(); done || err != nil {
			t.Errorf("busy event: Query() = %v, %v", done, err)
		}
		if done, err := end.Query(); !done || err != nil {
			t.Errorf("Query() = %v, %v", done, err)
		}
		// The stub's clock advances 1.5 ms per record.
		if ms, err := EventElapsedTime(start, end); err != nil || ms != 1.5 {
			t.Errorf("EventElapsedTime = %v, %v; want 1.5", ms, err)
		}
		if n1, n2 := stub.calls("cuEventElapsedTime"), stub.calls("cuEventElapsedTime_v2"); n1 != 0 || n2 != 2 {
			t.Errorf("elapsed time calls: v1 %d, v2 %d; want the _v2 entry point when exported", n1, n2)
		}

		quiet, err := EventCreate(EventDisableTiming)
		if err != nil {
			return err
		}
		if err := quiet.Record(0); err != nil {
			return err
		}
		if _, err := EventElapsedTime(start, quiet); !errors.Is(err, ErrorInvalidHandle) {
			t.Errorf("elapsed time with a timing-disabled event: %v", err)
		}
		if err := s.WaitEvent(quiet); err != nil {
			return err
		}

		for _, e := range []Event{start, end, quiet} {
			if err := e.Destroy(); err != nil {
				return err
			}
		}
		if err := start.Destroy(); !errors.Is(err, ErrorInvalidHandle) {
			t.Errorf("double event Destroy: %v", err)
		}
		if err := s.Destroy(); err != nil {
			return err
		}
		if err := s.Destroy(); !errors.Is(err, ErrorInvalidHandle) {
			t.Errorf("double stream Destroy: %v", err)
		}
		return nil
	})
}

// TestGraphCapture records a launch into a graph and replays it: while
// capturing nothing runs, and each GraphLaunch runs the kernel once.
func TestGraphCapture(t *testing.T) {
	ctx := stubContext(t)
	setParamSizes(t, "add_one", 8, 8)
	do(t, ctx, func() error {
		fn, err := loadPTX(t, stubPTX).Function("add_one")
		if err != nil {
			return err
		}
		const n = 32
		p, err := MemAlloc(4 * n)
		if err != nil {
			return err
		}
		if err := MemsetD32(p, 10, n); err != nil {
			return err
		}
		s, err := StreamCreate(StreamNonBlocking)
		if err != nil {
			return err
		}
		if err := StreamBeginCapture(0, CaptureModeGlobal); !errors.Is(err, ErrorStreamCaptureUnsupported) {
			t.Errorf("capturing the legacy stream: %v", err)
		}
		if err := StreamBeginCapture(s, CaptureModeThreadLocal); err != nil {
			return err
		}
		if st, err := StreamIsCapturing(s); err != nil || st != CaptureStatusActive {
			t.Errorf("StreamIsCapturing = %v, %v", st, err)
		}
		before := stub.launches()
		args := new(Args).Slice(p, n)
		if err := Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{n, 1, 1}, 0, s, args); err != nil {
			return err
		}
		if stub.launches() != before {
			t.Errorf("a launch ran while its stream was capturing")
		}
		g, err := StreamEndCapture(s)
		if err != nil {
			return err
		}
		if st, _ := StreamIsCapturing(s); st != CaptureStatusNone {
			t.Errorf("still capturing after StreamEndCapture")
		}
		x, err := GraphInstantiate(g, 0)
		if err != nil {
			return err
		}
		for range 3 {
			if err := GraphLaunch(x, s); err != nil {
				return err
			}
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		if got := stub.launches() - before; got != 3 {
			t.Errorf("graph ran the kernel %d times, want 3", got)
		}
		got := make([]uint32, n)
		if err := CopyDtoH(got, p); err != nil {
			return err
		}
		if want := slices.Repeat([]uint32{13}, n); !slices.Equal(got, want) {
			t.Errorf("after 3 graph launches: %v", got)
		}
		if err := x.Destroy(); err != nil {
			return err
		}
		if err := g.Destroy(); err != nil {
			return err
		}
		return MemFree(p)
	})
}
