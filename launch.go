package kern

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/gokern/kern/gpu"
)

// Kernel is a compiled kernel ready to launch on any device. kern gen
// creates one per //kern:kernel function and wraps it in a typed launcher
// (FooKernel.Launch); its Launch method takes untyped arguments and checks
// them at run time.
type Kernel struct {
	spec KernelSpec
}

// NewKernel is called by generated code, once per kernel in the order of
// the module's entries.
func NewKernel(spec KernelSpec) *Kernel {
	k := &Kernel{spec: spec}
	if spec.Module != nil {
		spec.Module.kernels = append(spec.Module.kernels, k)
	}
	return k
}

// Spec describes the kernel.
func (k *Kernel) Spec() *KernelSpec { return &k.spec }

// Grid is a launch shape. Make one with Cover, Cover2 or Blocks.
type Grid struct {
	blocks, threads, cover gpu.Dim3
	shared                 int
}

// Cover launches at least n threads along x, in blocks of the kernel's
// block=N shape (256 if it has none). Covering 0 launches nothing.
func Cover(n int) Grid { return Grid{cover: gpu.Dim3{X: n, Y: 1, Z: 1}} }

// Cover2 launches at least nx×ny threads, in blocks of the kernel's
// block shape (16×16 if it has none).
func Cover2(nx, ny int) Grid { return Grid{cover: gpu.Dim3{X: nx, Y: ny, Z: 1}} }

// Cover3 launches at least nx×ny×nz threads, in blocks of the kernel's
// block shape (8×8×4 if it has none).
func Cover3(nx, ny, nz int) Grid { return Grid{cover: gpu.Dim3{X: nx, Y: ny, Z: nz}} }

// Blocks launches exactly blocks×threads.
func Blocks(blocks, threads gpu.Dim3) Grid { return Grid{blocks: blocks, threads: threads} }

// WithShared sets the dynamic shared memory (gpu.DynShared) in bytes.
func (g Grid) WithShared(bytes int) Grid { g.shared = bytes; return g }

func (g Grid) String() string {
	if g.cover != (gpu.Dim3{}) {
		return fmt.Sprintf("cover %dx%dx%d", g.cover.X, g.cover.Y, g.cover.Z)
	}
	return fmt.Sprintf("%dx%dx%d blocks of %dx%dx%d", g.blocks.X, g.blocks.Y, g.blocks.Z, g.threads.X, g.threads.Y, g.threads.Z)
}

func ones(d gpu.Dim3) gpu.Dim3 {
	if d.X == 0 {
		d.X = 1
	}
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// resolve turns the grid into blocks and threads for kernel k.
func (g Grid) resolve(k *KernelSpec) (blocks, threads gpu.Dim3) {
	if g.cover == (gpu.Dim3{}) {
		return ones(g.blocks), ones(g.threads)
	}
	threads = k.Block
	if threads == (gpu.Dim3{}) {
		threads = gpu.Dim3{X: 256}
		switch {
		case g.cover.Z > 1:
			threads = gpu.Dim3{X: 8, Y: 8, Z: 4}
		case g.cover.Y > 1:
			threads = gpu.Dim3{X: 16, Y: 16}
		}
	}
	threads = ones(threads)
	c := g.cover
	div := func(a, b int) int { return (a + b - 1) / b }
	return gpu.Dim3{X: div(c.X, threads.X), Y: div(c.Y, threads.Y), Z: div(c.Z, threads.Z)}, threads
}

// Queue is where a launch goes: a *Device (its default stream) or a
// *Stream.
type Queue interface {
	device() *Device
	stream() any
}

func (d *Device) device() *Device { return d }
func (d *Device) stream() any     { return nil }

// Arg is one kernel argument: a buffer or a scalar. Generated launchers
// build them; use BufferArg and ScalarArg with Kernel.Launch directly.
type Arg interface{ arg() argValue }

type argValue struct {
	buf    any // the *Buffer[T], for error messages; nil for scalars
	dev    *Device
	addr   uint64
	n      int
	size   int
	live   *bool
	native func() any // the Go value native mode passes
	bits   uint64     // a scalar's bits
}

type scalarArg struct{ v argValue }

func (s scalarArg) arg() argValue { return s.v }

// ScalarArg wraps a scalar kernel argument.
func ScalarArg[T gpu.Elem](v T) Arg {
	return scalarArg{argValue{size: elemSize[T](), bits: toBits(v), native: func() any { return v }}}
}

// toBits returns the bits of a scalar as it lies in memory (little-endian,
// zero-extended): two's complement for integers, IEEE 754 for floats, 0 or
// 1 for bool, for named types such as gpu.Half too.
func toBits[T gpu.Elem](v T) uint64 {
	var out uint64
	switch elemSize[T]() {
	case 1:
		out = uint64(*(*uint8)(ptr(&v)))
	case 2:
		out = uint64(*(*uint16)(ptr(&v)))
	case 4:
		out = uint64(*(*uint32)(ptr(&v)))
	default:
		out = *(*uint64)(ptr(&v))
	}
	return out
}

// BufferArg wraps a buffer kernel argument.
func BufferArg[T gpu.Elem](b *Buffer[T]) Arg {
	if b == nil {
		return nilBuffer{}
	}
	return b
}

type nilBuffer struct{}

func (nilBuffer) arg() argValue { return argValue{} }

// launch is a checked launch handed to a backend.
type launch struct {
	k       *Kernel
	mod     any
	blocks  gpu.Dim3
	threads gpu.Dim3
	shared  int
	args    []argValue
	params  []byte
	stream  any
}

// Launch runs the kernel on q over grid with args in the kernel's
// parameter order. It checks, before anything runs: the argument count and
// kinds; that buffers are live, on q's device, and that every buffer the
// kernel writes overlaps no other argument; and the grid, block and shared
// memory against the device's limits. On the emulator and in native mode
// the launch completes before Launch returns; on a GPU it is queued, and a
// failed device bounds check surfaces from the next Sync or Download.
func (k *Kernel) Launch(q Queue, grid Grid, args ...Arg) error {
	if q == nil {
		return fmt.Errorf("kern: %s: nil device", k.spec.Name)
	}
	dev := q.device()
	if c := grid.cover; c != (gpu.Dim3{}) && (c.X == 0 || c.Y == 0 || c.Z == 0) {
		// Covering zero elements launches nothing, as a loop over zero
		// elements runs nothing.
		return nil
	}
	l, err := k.prepare(dev, grid, args)
	if err != nil {
		return err
	}
	l.stream = q.stream()
	if s, ok := q.(*Stream); ok && s.capture != nil {
		*s.capture = append(*s.capture, l)
		return nil
	}
	if err := dev.b.launch(l); err != nil {
		var de *DeviceError
		if errors.As(err, &de) {
			return err
		}
		return fmt.Errorf("kern: %s: %w", k.spec.Name, err)
	}
	return nil
}

func (k *Kernel) errorf(format string, a ...any) error {
	return fmt.Errorf("kern: %s: "+format, append([]any{k.spec.Name}, a...)...)
}

func (k *Kernel) prepare(dev *Device, grid Grid, args []Arg) (*launch, error) {
	s := &k.spec
	if len(args) != len(s.Params) {
		return nil, k.errorf("got %d arguments, want %d (%s)", len(args), len(s.Params), k.signature())
	}
	l := &launch{k: k, args: make([]argValue, len(args))}
	for i, a := range args {
		p := s.Params[i]
		if a == nil {
			return nil, k.errorf("parameter %s: nil argument", p.Name)
		}
		v := a.arg()
		l.args[i] = v
		isBuf := v.live != nil
		switch {
		case p.Kind == SliceParam && !isBuf:
			if v.native == nil {
				return nil, k.errorf("parameter %s: nil buffer", p.Name)
			}
			return nil, k.errorf("parameter %s: want a buffer of %s, got a scalar", p.Name, p.Elem)
		case p.Kind == ScalarParam && isBuf:
			return nil, k.errorf("parameter %s: want a %s scalar, got a buffer", p.Name, p.Elem)
		case v.size != p.Size:
			return nil, k.errorf("parameter %s: want %s (%d-byte elements), got %d-byte elements", p.Name, p.Elem, p.Size, v.size)
		}
		if isBuf {
			if !*v.live {
				return nil, k.errorf("parameter %s: buffer was freed", p.Name)
			}
			if v.dev != dev {
				return nil, k.errorf("parameter %s: buffer lives on %s, launch is on %s", p.Name, v.dev, dev)
			}
		}
	}
	// A written buffer must not alias any other argument: the compiler
	// loads read-only parameters through the non-coherent cache, and
	// kernels assume their outputs are private (what Rust's borrow checker
	// would enforce).
	for i, p := range s.Params {
		if p.Kind != SliceParam || !p.Writes {
			continue
		}
		a := l.args[i]
		for j, q := range s.Params {
			b := l.args[j]
			if i == j || q.Kind != SliceParam {
				continue
			}
			if overlaps(a, b) {
				return nil, k.errorf("parameter %s is written by the kernel and overlaps parameter %s: pass distinct buffers", p.Name, q.Name)
			}
		}
	}
	l.blocks, l.threads = grid.resolve(s)
	l.shared = grid.shared
	if err := k.checkShape(dev, l); err != nil {
		return nil, err
	}
	mod, err := dev.module(s.Module)
	if err != nil {
		return nil, err
	}
	l.mod = mod
	l.params = packParams(s, l.args)
	return l, nil
}

func overlaps(a, b argValue) bool {
	if a.n == 0 || b.n == 0 {
		return false
	}
	aEnd := a.addr + uint64(a.n*a.size)
	bEnd := b.addr + uint64(b.n*b.size)
	return a.addr < bEnd && b.addr < aEnd
}

func (k *Kernel) checkShape(dev *Device, l *launch) error {
	lim := dev.limit
	t, b := l.threads, l.blocks
	if t.X < 1 || t.Y < 1 || t.Z < 1 || b.X < 1 || b.Y < 1 || b.Z < 1 {
		return k.errorf("grid %v has an empty dimension", gridString(b, t))
	}
	if n := t.X * t.Y * t.Z; n > lim.MaxThreadsPerBlock {
		return k.errorf("block of %dx%dx%d = %d threads exceeds the device's %d", t.X, t.Y, t.Z, n, lim.MaxThreadsPerBlock)
	}
	if t.X > lim.MaxBlockDim.X || t.Y > lim.MaxBlockDim.Y || t.Z > lim.MaxBlockDim.Z {
		return k.errorf("block %dx%dx%d exceeds the device's maximum %dx%dx%d", t.X, t.Y, t.Z, lim.MaxBlockDim.X, lim.MaxBlockDim.Y, lim.MaxBlockDim.Z)
	}
	if b.X > lim.MaxGridDim.X || b.Y > lim.MaxGridDim.Y || b.Z > lim.MaxGridDim.Z {
		return k.errorf("grid of %dx%dx%d blocks exceeds the device's maximum %dx%dx%d", b.X, b.Y, b.Z, lim.MaxGridDim.X, lim.MaxGridDim.Y, lim.MaxGridDim.Z)
	}
	if l.shared < 0 {
		return k.errorf("negative dynamic shared memory %d", l.shared)
	}
	if tot := l.shared + k.spec.SharedBytes; tot > lim.MaxSharedPerBlock {
		return k.errorf("%d bytes of shared memory (%d static + %d dynamic) exceed the device's %d per block", tot, k.spec.SharedBytes, l.shared, lim.MaxSharedPerBlock)
	}
	if k.spec.Block != (gpu.Dim3{}) {
		// Per dimension, not only in total: the compiler bounds
		// ThreadIdx and BlockDim by the directive's extents to prove
		// indices in range (compiler/ranges.go).
		hint := ones(k.spec.Block)
		if t.X > hint.X || t.Y > hint.Y || t.Z > hint.Z {
			return k.errorf("block %dx%dx%d exceeds the kernel's block=%dx%dx%d (its .maxntid) in some dimension", t.X, t.Y, t.Z, hint.X, hint.Y, hint.Z)
		}
	}
	return nil
}

func gridString(b, t gpu.Dim3) string {
	return fmt.Sprintf("%dx%dx%d blocks of %dx%dx%d", b.X, b.Y, b.Z, t.X, t.Y, t.Z)
}

// packParams lays out the arguments as the kernel's .param list: a slice
// is a .u64 pointer then a .s64 length; scalars take their size; each at
// its natural alignment (PTX ISA §5.1.6.1).
func packParams(s *KernelSpec, args []argValue) []byte {
	var out []byte
	put := func(size int, bits uint64) {
		for len(out)%size != 0 {
			out = append(out, 0)
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], bits)
		out = append(out, b[:size]...)
	}
	for i, p := range s.Params {
		a := args[i]
		if p.Kind == SliceParam {
			put(8, a.addr)
			put(8, uint64(a.n))
			continue
		}
		put(p.Size, a.bits)
	}
	return out
}

func (k *Kernel) signature() string {
	var parts []string
	for _, p := range k.spec.Params {
		if p.Kind == SliceParam {
			parts = append(parts, p.Name+" []"+p.Elem)
		} else {
			parts = append(parts, p.Name+" "+p.Elem)
		}
	}
	return k.spec.Name + "(" + strings.Join(parts, ", ") + ")"
}

// slotError decodes a module's error slot (see compiler.ErrorSlot): the
// kernel index + 1 in the high half of the first word, the site index + 1
// in the low half. It returns nil for an empty slot.
func (m *Module) slotError(slot [4]uint64) error {
	if slot[0] == 0 {
		return nil
	}
	ki, site := int(slot[0]>>32)-1, int(slot[0]&0xffffffff)-1
	if ki < 0 || ki >= len(m.kernels) {
		return fmt.Errorf("kern: a kernel of package %s failed a device check (unknown kernel %d)", m.Pkg, ki)
	}
	k := m.kernels[ki]
	where := "unknown site"
	if site >= 0 && site < len(k.spec.Sites) {
		where = k.spec.Sites[site]
	}
	if strings.HasPrefix(where, "panic at ") {
		return &DeviceError{Kernel: k.spec.Name, Site: strings.TrimPrefix(where, "panic at "), Panic: true, Thread: int64(slot[3])}
	}
	return &DeviceError{Kernel: k.spec.Name, Site: where, Index: int64(slot[1]), Length: int64(slot[2]), Thread: int64(slot[3])}
}

// DeviceError is a failed device-side bounds check (or a panic) reported
// by a kernel.
type DeviceError struct {
	Kernel string
	Site   string // Go file:line:col of the index expression
	Index  int64
	Length int64
	Thread int64 // blockIdx.x*blockDim.x + threadIdx.x of the first failing thread
	Panic  bool
}

func (e *DeviceError) Error() string {
	if e.Panic {
		return fmt.Sprintf("kern: kernel %s panicked at %s (thread %d)", e.Kernel, e.Site, e.Thread)
	}
	return fmt.Sprintf("kern: kernel %s: index out of range [%d] with length %d at %s (thread %d)", e.Kernel, e.Index, e.Length, e.Site, e.Thread)
}
