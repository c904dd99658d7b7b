package main

// kern bench memcpy: copy bandwidth between host and GPU and within GPU
// memory, through the driver's asynchronous copies on one stream, timed by
// CUDA events around each copy.
//
//	HtoD/DtoH pinned    to and from page-locked host memory (MemHostAlloc): DMA
//	                    at the link's speed (PCIe, or NVLink-C2C on Grace)
//	HtoD/DtoH pageable  to and from ordinary Go memory, which the driver stages
//	                    through pinned buffers: what kern.Upload and Download get
//	DtoD                between two device allocations
//
// GB/s is bytes copied / median time (10⁹ bytes per second). % of peak is
// given for DtoD only, against the DRAM peak, counting each byte twice: a
// device-to-device copy reads it and writes it. The host link's peak is not
// something the driver reports.

import (
	"fmt"
	"math"
	"runtime"
	"time"
	"unsafe"

	"github.com/gokern/kern/cuda"
)

func benchMemcpy(env *benchEnv) error {
	if !env.isCUDA() {
		env.notef("memcpy: does not apply on %s: it measures copies over the host↔GPU link and within GPU memory, which %s does not have",
			env.dev.Kind(), env.dev.Kind())
		return nil
	}
	ctx, err := cuda.PrimaryCtxRetain(env.cudaDev)
	if err != nil {
		return err
	}
	defer ctx.Release()
	return ctx.Do(func() error {
		s, err := cuda.StreamCreate(cuda.StreamNonBlocking)
		if err != nil {
			return err
		}
		defer s.Destroy()
		t, err := newEventTimer(s)
		if err != nil {
			return err
		}
		defer t.destroy()
		for _, size := range env.cfg.memcpySizes {
			if err := memcpySize(env, t, size); err != nil {
				return fmt.Errorf("%s: %w", fmtBytes(size), err)
			}
		}
		return nil
	})
}

// eventTimer times work queued on a stream with a pair of CUDA events. It
// must be used inside the stream's context's Do.
type eventTimer struct {
	s           cuda.Stream
	start, stop cuda.Event
}

func newEventTimer(s cuda.Stream) (*eventTimer, error) {
	start, err := cuda.EventCreate(cuda.EventDefault)
	if err != nil {
		return nil, err
	}
	stop, err := cuda.EventCreate(cuda.EventDefault)
	if err != nil {
		start.Destroy()
		return nil, err
	}
	return &eventTimer{s: s, start: start, stop: stop}, nil
}

func (t *eventTimer) destroy() {
	t.start.Destroy()
	t.stop.Destroy()
}

// time queues work between the two events and returns the device time
// between them.
func (t *eventTimer) time(work func(s cuda.Stream) error) (time.Duration, error) {
	if err := t.start.Record(t.s); err != nil {
		return 0, err
	}
	if err := work(t.s); err != nil {
		return 0, err
	}
	if err := t.stop.Record(t.s); err != nil {
		return 0, err
	}
	if err := t.stop.Synchronize(); err != nil {
		return 0, err
	}
	ms, err := cuda.EventElapsedTime(t.start, t.stop)
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

func memcpySize(env *benchEnv, t *eventTimer, size int) error {
	n := uint64(size)
	pinned, err := cuda.MemHostAlloc(n, cuda.HostAllocDefault)
	if err != nil {
		return err
	}
	defer cuda.MemFreeHost(pinned)
	pageable := make([]byte, size)
	src, err := cuda.MemAlloc(n)
	if err != nil {
		return err
	}
	defer cuda.MemFree(src)
	dst, err := cuda.MemAlloc(n)
	if err != nil {
		return err
	}
	defer cuda.MemFree(dst)
	if err := cuda.MemsetD8(src, 1, n); err != nil {
		return err
	}
	page := unsafe.Pointer(&pageable[0])
	cases := []struct {
		name string
		copy func(s cuda.Stream) error
		dram bool // within device memory: compare with the DRAM peak
	}{
		{"HtoD pinned", func(s cuda.Stream) error { return cuda.MemcpyHtoDAsync(dst, pinned, n, s) }, false},
		{"DtoH pinned", func(s cuda.Stream) error { return cuda.MemcpyDtoHAsync(pinned, src, n, s) }, false},
		{"HtoD pageable", func(s cuda.Stream) error { return cuda.MemcpyHtoDAsync(dst, page, n, s) }, false},
		{"DtoH pageable", func(s cuda.Stream) error { return cuda.MemcpyDtoHAsync(page, src, n, s) }, false},
		{"DtoD", func(s cuda.Stream) error { return cuda.MemcpyDtoDAsync(dst, src, n, s) }, true},
	}
	for _, c := range cases {
		sec, err := timeRuns(env.cfg, func() (time.Duration, error) { return t.time(c.copy) })
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		row := benchRow{bench: "memcpy", name: c.name, size: fmtBytes(size), time: sec,
			value: float64(size) / sec / 1e9, unit: "GB/s", peak: math.NaN()}
		if c.dram {
			row.peak = env.pctOfPeak(2 * float64(size) / sec)
		}
		env.add(row)
	}
	runtime.KeepAlive(pageable)
	return nil
}
