package kern

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gokern/kern/gpu"
)

// HostBuffer is host memory that copies to and from device buffers run
// from asynchronously, in a queue's order: page-locked on a GPU
// (cuMemAllocHost), so that a copy is a DMA the host does not wait for and
// runs at the link's full rate (54 GB/s against 13–18 for Go memory on the
// H100 of docs/performance-gpu.md). Its Data is an ordinary Go slice.
//
// A queued copy reads or writes Data until the queue reaches it: do not
// change a source, or read a destination, before a Sync of the queue (or
// of the device). On the emulator and in native mode, whose launches
// complete when they are made, a copy completes when it is queued.
type HostBuffer[T gpu.Elem] struct {
	dev  *Device
	data []T
	mem  []byte // data's bytes, as the backend allocated them
	live *bool
}

// AllocHost allocates n zeroed elements of host memory for dev's queued
// copies.
func AllocHost[T gpu.Elem](dev *Device, n int) (*HostBuffer[T], error) {
	size := elemSize[T]()
	if err := checkAlloc("kern.AllocHost", dev, n, size); err != nil {
		return nil, err
	}
	mem, err := dev.b.allocHost(max(n*size, 1))
	if err != nil {
		return nil, fmt.Errorf("kern.AllocHost: %d bytes on %s: %w", n*size, dev.kind, err)
	}
	clear(mem)
	live := true
	h := &HostBuffer[T]{dev: dev, mem: mem, live: &live, data: unsafe.Slice((*T)(unsafe.Pointer(&mem[0])), n)}
	runtime.AddCleanup(h, func(l *bool) {
		if *l {
			*l = false
			if !dev.closed.Load() {
				dev.b.freeHost(mem)
			}
		}
	}, h.live)
	return h, nil
}

// Data is the buffer's memory, valid until Free.
func (h *HostBuffer[T]) Data() []T {
	if h == nil || !*h.live {
		return nil
	}
	return h.data
}

// Len is the number of elements.
func (h *HostBuffer[T]) Len() int { return len(h.data) }

// String names the buffer in messages, e.g. "HostBuffer[float32] of 1000
// for emu device #2".
func (h *HostBuffer[T]) String() string {
	if h == nil {
		return "HostBuffer[" + elemName[T]() + "](nil)"
	}
	return fmt.Sprintf("HostBuffer[%s] of %d for %s", elemName[T](), len(h.data), h.dev.label())
}

// Free releases the memory; Data is nil afterwards. Freeing twice is an
// error.
func (h *HostBuffer[T]) Free() error {
	if err := h.check("Free"); err != nil {
		return err
	}
	*h.live = false
	h.data = nil
	if h.dev.closed.Load() {
		return nil
	}
	return h.dev.b.freeHost(h.mem)
}

func (h *HostBuffer[T]) check(op string) error {
	if h == nil {
		return fmt.Errorf("kern: %s on a nil host buffer", op)
	}
	if !*h.live {
		return fmt.Errorf("kern: %s on a freed host buffer", op)
	}
	return nil
}

// CopyFromHost queues a copy of src into b on q: the copy runs after the
// work queued on q before it and before the work queued after it, and the
// host does not wait for it. src must hold Len elements, be src's
// device's, and stay unchanged until q reaches the copy. Inside
// Stream.Capture the copy is recorded into the graph: each replay copies
// what src then holds.
func (b *Buffer[T]) CopyFromHost(q Queue, src *HostBuffer[T]) error {
	return b.copyHost(q, src, true, "CopyFromHost")
}

// CopyToHost queues a copy of b into dst on q, as CopyFromHost does the
// other way: read dst's Data after a Sync of q.
func (b *Buffer[T]) CopyToHost(q Queue, dst *HostBuffer[T]) error {
	return b.copyHost(q, dst, false, "CopyToHost")
}

func (b *Buffer[T]) copyHost(q Queue, h *HostBuffer[T], toDevice bool, op string) error {
	if err := b.check(op); err != nil {
		return err
	}
	if err := h.check(op); err != nil {
		return err
	}
	if q == nil || q.device() == nil {
		return fmt.Errorf("kern: %s: nil queue", op)
	}
	if dev := q.device(); dev != b.dev || h.dev != b.dev {
		return fmt.Errorf("kern: %s: %s, %s and the queue's %s are not one device", op, b, h, dev.label())
	}
	if h.Len() != b.n {
		return fmt.Errorf("kern: %s: %s and %s differ in length", op, b, h)
	}
	mem := h.mem[:b.n*elemSize[T]()]
	run := func() error { return b.dev.b.copyAsync(toDevice, b.addr, mem, q.stream()) }
	if s := queueStream(q); s != nil && s.capture != nil {
		// A device that records launches itself records the copy too.
		*s.capture = append(*s.capture, &launch{hostCopy: run})
		return nil
	}
	if err := run(); err != nil {
		return fmt.Errorf("kern: %s: %w", op, err)
	}
	return nil
}
