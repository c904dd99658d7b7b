package kern

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/gokern/kern/gpu"
)

// Buffer is a typed array in device memory. It carries its length, so a
// kernel's len(s) is the buffer's Len. Free it when done; a finalizer
// frees a forgotten buffer, but device memory is scarcer than the Go
// heap's view of it suggests.
type Buffer[T gpu.Elem] struct {
	dev  *Device
	addr uint64
	n    int
	// live is shared with the finalizer's closure, and with every view
	// of the allocation.
	live *bool
	// of is the allocation a view (Slice) shares memory with, nil for an
	// allocation. The view keeps it reachable, so its cleanup cannot free
	// the memory under the view.
	of *Buffer[T]
}

// viewAlign is the byte alignment a view must start at: every buffer a
// kernel receives is 256-byte aligned (cuMemAlloc and the emulator
// allocate so), and the compiler proves vector accesses aligned from it
// (compiler/align.go), so a view may not break it.
const viewAlign = 256

// Alloc allocates n zeroed elements on dev. A request larger than the
// device's memory (on the emulator and in native mode, the host's) is an
// error, not an out-of-memory crash.
func Alloc[T gpu.Elem](dev *Device, n int) (*Buffer[T], error) {
	size := elemSize[T]()
	if err := checkAlloc("kern.Alloc", dev, n, size); err != nil {
		return nil, err
	}
	bytes := n * size
	if limit := dev.limit.MaxAlloc; limit > 0 && uint64(bytes) > limit {
		return nil, fmt.Errorf("kern.Alloc: %d elements of %s (%s) exceed the %s of %s", n, elemName[T](), byteSize(uint64(bytes)), byteSize(limit), dev.memoryName())
	}
	addr, err := dev.b.alloc(max(bytes, 1))
	if err != nil {
		return nil, fmt.Errorf("kern.Alloc: %d bytes on %s: %w", bytes, dev.kind, err)
	}
	if err := dev.b.memset(addr, max(bytes, 1)); err != nil {
		dev.b.free(addr)
		return nil, fmt.Errorf("kern.Alloc: zeroing: %w", err)
	}
	dev.mu.Lock()
	dev.bufs[addr] = bytes
	dev.mu.Unlock()
	live := true
	b := &Buffer[T]{dev: dev, addr: addr, n: n, live: &live}
	runtime.AddCleanup(b, func(l *bool) {
		if *l {
			*l = false
			dev.mu.Lock()
			delete(dev.bufs, addr)
			closed := dev.closed.Load()
			dev.mu.Unlock()
			if !closed {
				dev.b.free(addr)
			}
		}
	}, b.live)
	return b, nil
}

// checkAlloc checks an allocation of n elements of size bytes on dev,
// for op (Alloc, AllocHost).
func checkAlloc(op string, dev *Device, n, size int) error {
	if dev == nil {
		return fmt.Errorf("%s: nil device", op)
	}
	if err := dev.usable(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if n < 0 {
		return fmt.Errorf("%s: negative length %d", op, n)
	}
	if n > math.MaxInt/size {
		return fmt.Errorf("%s: %d elements of %d bytes overflow the byte count", op, n, size)
	}
	return nil
}

// Upload allocates a buffer on dev holding a copy of xs.
func Upload[T gpu.Elem](dev *Device, xs []T) (*Buffer[T], error) {
	b, err := Alloc[T](dev, len(xs))
	if err != nil {
		return nil, err
	}
	if err := b.CopyFrom(xs); err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}

func elemSize[T gpu.Elem]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

func asBytes[T gpu.Elem](xs []T) []byte {
	if len(xs) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&xs[0])), len(xs)*elemSize[T]())
}

// Len is the number of elements.
func (b *Buffer[T]) Len() int { return b.n }

// String names the buffer in messages: element type, length and device,
// e.g. "Buffer[float32] of 1000 on emu device #2", and for a view where it
// starts: "Buffer[float32] of 256 at 512 of 1000 on emu device #2".
func (b *Buffer[T]) String() string {
	if b == nil {
		return "Buffer[" + elemName[T]() + "](nil)"
	}
	if b.of != nil {
		return fmt.Sprintf("Buffer[%s] of %d at %d of %d on %s", elemName[T](), b.n, b.offset(), b.of.n, b.dev.label())
	}
	return fmt.Sprintf("Buffer[%s] of %d on %s", elemName[T](), b.n, b.dev.label())
}

// offset is the index of a view's first element in its allocation.
func (b *Buffer[T]) offset() int {
	if b.of == nil {
		return 0
	}
	return int(b.addr-b.of.addr) / elemSize[T]()
}

// Slice returns the elements [lo, hi) of b as a buffer that shares b's
// memory, as Go's s[lo:hi] does: a kernel launched on the view reads and
// writes b's elements lo through hi−1, its len(s) is hi−lo, and an index
// past the view is a bounds error even where b has memory. It is what a
// stacked tensor's part (one layer's weights, one sequence's rows) is
// passed as.
//
// The view starts 256-byte aligned, as every buffer does (kernels may
// assume it), so lo·sizeof(T) must be a multiple of 256: lo a multiple of
// 64 float32s or 128 halves (an empty view, which no kernel reads, may
// start anywhere). The view lives as long as the allocation:
// freeing b (or the buffer b views) frees it too, while Free on the view
// itself is an error, and the allocation is not collected while a view is
// reachable. Launches check views as buffers: a kernel may write two
// views of one allocation that do not overlap, never two that do.
func (b *Buffer[T]) Slice(lo, hi int) (*Buffer[T], error) {
	if err := b.check("Slice"); err != nil {
		return nil, err
	}
	if lo < 0 || hi < lo || hi > b.n {
		return nil, fmt.Errorf("kern: Slice(%d, %d) of %s: want 0 ≤ lo ≤ hi ≤ %d", lo, hi, b, b.n)
	}
	size := elemSize[T]()
	if off := lo * size; off%viewAlign != 0 && hi > lo {
		return nil, fmt.Errorf("kern: Slice(%d, %d) of %s: the view would start %d bytes in, not a multiple of %d (kernels assume every buffer is %d-byte aligned); start it at a multiple of %d elements",
			lo, hi, b, off, viewAlign, viewAlign, viewAlign/size)
	}
	of := b
	if b.of != nil {
		of = b.of
	}
	return &Buffer[T]{dev: b.dev, addr: b.addr + uint64(lo*size), n: hi - lo, live: b.live, of: of}, nil
}

// Device is the device the buffer lives on.
func (b *Buffer[T]) Device() *Device { return b.dev }

func (b *Buffer[T]) check(op string) error {
	if b == nil {
		return fmt.Errorf("kern: %s on a nil buffer", op)
	}
	if err := b.dev.usable(); err != nil {
		return fmt.Errorf("kern: %s: %w", op, err)
	}
	if !*b.live {
		return fmt.Errorf("kern: %s on a freed buffer", op)
	}
	return nil
}

// CopyFrom copies xs into the buffer; len(xs) must equal Len.
func (b *Buffer[T]) CopyFrom(xs []T) error {
	if err := b.check("CopyFrom"); err != nil {
		return err
	}
	if len(xs) != b.n {
		return fmt.Errorf("kern: CopyFrom: %d elements into a buffer of %d", len(xs), b.n)
	}
	if err := b.dev.b.write(b.addr, asBytes(xs)); err != nil {
		return fmt.Errorf("kern: CopyFrom: %w", err)
	}
	return nil
}

// CopyTo copies the buffer into dst; len(dst) must equal Len. It waits for
// queued work that writes the buffer.
func (b *Buffer[T]) CopyTo(dst []T) error {
	if err := b.check("CopyTo"); err != nil {
		return err
	}
	if len(dst) != b.n {
		return fmt.Errorf("kern: CopyTo: a buffer of %d elements into %d", b.n, len(dst))
	}
	if err := b.dev.b.read(b.addr, asBytes(dst)); err != nil {
		return fmt.Errorf("kern: CopyTo: %w", err)
	}
	return nil
}

// Download returns a copy of the buffer's contents.
func (b *Buffer[T]) Download() ([]T, error) {
	if err := b.check("Download"); err != nil {
		return nil, err
	}
	out := make([]T, b.n)
	if err := b.CopyTo(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Free releases the buffer's memory, and so ends every view of it.
// Freeing twice is an error, and so is freeing a view: free the buffer it
// views.
func (b *Buffer[T]) Free() error {
	if err := b.check("Free"); err != nil {
		return err
	}
	if b.of != nil {
		return fmt.Errorf("kern: Free of %s, a view: free the buffer it views", b)
	}
	*b.live = false
	b.dev.mu.Lock()
	delete(b.dev.bufs, b.addr)
	b.dev.mu.Unlock()
	return b.dev.b.free(b.addr)
}

// nativeValue is the []T native mode passes for the buffer (through an
// interface method rather than a closure in argValue, which would cost a
// heap allocation per buffer per launch on every device).
func (b *Buffer[T]) nativeValue() any { return b.hostSlice() }

// hostSlice is the buffer's memory as a Go slice (native mode only).
func (b *Buffer[T]) hostSlice() []T {
	mem := b.dev.b.hostView(b.addr)
	if b.n == 0 || mem == nil {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[0])), b.n)
}

// argument implements Arg for the launchers.
func (b *Buffer[T]) arg() argValue {
	return argValue{buf: b, dev: b.dev, addr: b.addr, n: b.n, size: elemSize[T](), elem: elemName[T](), live: b.live}
}
