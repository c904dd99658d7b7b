package kern

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/launchfact"
)

// Kernel is a compiled kernel ready to launch on any device. kern gen
// creates one per //kern:kernel function and wraps it in a typed launcher
// (FooKernel.Launch); its Launch method takes untyped arguments and checks
// them at run time.
type Kernel struct {
	spec   KernelSpec
	source sourceCheck // stale.go
	// facts are spec.Facts32 parsed, on the first launch (index32.go).
	facts struct {
		once           sync.Once
		prog           *launchfact.Program
		isInt, isSlice []bool
		last           atomic.Pointer[factMemo] // the last launch's answer
	}
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
	// exact is set by Blocks; otherwise cover is the thread count, and
	// the zero Grid covers nothing.
	exact bool
}

// Cover launches at least n threads along x, in blocks of the kernel's
// block=N shape (256 if it has none). Covering 0 launches nothing; a
// negative n is an error at launch.
func Cover(n int) Grid { return Grid{cover: gpu.Dim3{X: n, Y: 1, Z: 1}} }

// Cover2 launches at least nx×ny threads, in blocks of the kernel's
// block shape (16×16 if it has none).
func Cover2(nx, ny int) Grid { return Grid{cover: gpu.Dim3{X: nx, Y: ny, Z: 1}} }

// Cover3 launches at least nx×ny×nz threads, in blocks of the kernel's
// block shape (8×8×4 if it has none).
func Cover3(nx, ny, nz int) Grid { return Grid{cover: gpu.Dim3{X: nx, Y: ny, Z: nz}} }

// Blocks launches exactly blocks×threads. Zeros after the last non-zero
// dimension of a Dim3 stand for 1, so gpu.Dim3{X: n} is n×1×1 and
// gpu.Dim3{X: a, Y: b} is a×b×1; any other zero (an X of 0, or a Y of 0
// with a Z given) launches nothing, as Cover(0) does. Write all three
// dimensions when one is computed and may be 0: gpu.Dim3{X: c, Y: r, Z: 1}.
// A negative dimension is an error at launch.
func Blocks(blocks, threads gpu.Dim3) Grid {
	return Grid{blocks: blocks, threads: threads, exact: true}
}

// WithShared sets the dynamic shared memory (gpu.DynShared) in bytes.
func (g Grid) WithShared(bytes int) Grid { g.shared = bytes; return g }

func (g Grid) String() string {
	if !g.exact {
		return fmt.Sprintf("cover %dx%dx%d", g.cover.X, g.cover.Y, g.cover.Z)
	}
	return fmt.Sprintf("%dx%dx%d blocks of %dx%dx%d", g.blocks.X, g.blocks.Y, g.blocks.Z, g.threads.X, g.threads.Y, g.threads.Z)
}

// trailingOnes fills the zeros after d's last non-zero dimension with 1
// (the shorthand gpu.Dim3{X: n} for n×1×1). Other zeros stay.
func trailingOnes(d gpu.Dim3) gpu.Dim3 {
	if d.Z == 0 {
		d.Z = 1
		if d.Y == 0 {
			d.Y = 1
		}
	}
	return d
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

func negative(d gpu.Dim3) bool { return d.X < 0 || d.Y < 0 || d.Z < 0 }
func empty(d gpu.Dim3) bool    { return d.X == 0 || d.Y == 0 || d.Z == 0 }

// resolve turns the grid into blocks and threads for kernel k. A grid
// that covers nothing gives a zero dimension; a negative one an error.
func (g Grid) resolve(k *Kernel) (blocks, threads gpu.Dim3, err error) {
	if g.exact {
		blocks, threads = trailingOnes(g.blocks), trailingOnes(g.threads)
		if negative(g.blocks) || negative(g.threads) {
			return blocks, threads, k.errorf("kern.Blocks(%s, %s) has a negative dimension", dimString(g.blocks), dimString(g.threads))
		}
		return blocks, threads, nil
	}
	c := g.cover
	if negative(c) {
		return blocks, threads, k.errorf("covering %s threads: a dimension is negative", dimString(c))
	}
	threads = k.spec.Block
	if threads == (gpu.Dim3{}) {
		threads = gpu.Dim3{X: 256}
		switch {
		case c.Z > 1:
			threads = gpu.Dim3{X: 8, Y: 8, Z: 4}
		case c.Y > 1:
			threads = gpu.Dim3{X: 16, Y: 16}
		}
	}
	threads = ones(threads)
	div := func(a, b int) int { return (a + b - 1) / b }
	return gpu.Dim3{X: div(c.X, threads.X), Y: div(c.Y, threads.Y), Z: div(c.Z, threads.Z)}, threads, nil
}

func dimString(d gpu.Dim3) string { return fmt.Sprintf("%dx%dx%d", d.X, d.Y, d.Z) }

// Queue is where a launch goes: a *Device (its default stream), a
// *Stream, or either bound to a context by WithContext.
type Queue interface {
	device() *Device
	stream() any
	launchContext() context.Context // nil: never cancelled
}

func (d *Device) device() *Device                { return d }
func (d *Device) stream() any                    { return nil }
func (d *Device) launchContext() context.Context { return nil }

// WithContext returns q with launches bound to ctx: a launch made after
// ctx is done returns its error without running, and on the emulator and
// in native mode a running launch stops when ctx is done and returns an
// error wrapping ctx.Err() (a *DeviceError naming the kernel, and on the
// emulator the Go line where it was). Use it, with context.WithTimeout,
// to bound a kernel that may not finish:
//
//	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
//	defer cancel()
//	err := mykernels.SolveKernel.Launch(kern.WithContext(ctx, dev), grid, ...)
//
// Native mode stops threads at their next barrier or warp collective; a
// thread looping without one cannot be stopped from outside, so Launch
// returns and the device is marked unusable, since the abandoned thread
// may still write its buffers. A GPU runs a kernel once it is queued: ctx
// is checked only before queueing.
func WithContext(ctx context.Context, q Queue) Queue { return ctxQueue{q, ctx} }

type ctxQueue struct {
	q   Queue
	ctx context.Context
}

func (c ctxQueue) device() *Device                { return c.q.device() }
func (c ctxQueue) stream() any                    { return c.q.stream() }
func (c ctxQueue) launchContext() context.Context { return c.ctx }

// queueStream is the *Stream q launches on, if any.
func queueStream(q Queue) *Stream {
	switch v := q.(type) {
	case *Stream:
		return v
	case ctxQueue:
		return queueStream(v.q)
	}
	return nil
}

// Arg is one kernel argument: a buffer or a scalar. Generated launchers
// build them; use BufferArg and ScalarArg with Kernel.Launch directly.
type Arg interface{ arg() argValue }

type argValue struct {
	buf    any // the *Buffer[T], for error messages; nil for scalars
	dev    *Device
	addr   uint64
	n      int
	size   int
	elem   string // the Go element or scalar type, as elemName
	live   *bool
	native func() any // a scalar's Go value, as native mode passes it
	bits   uint64     // a scalar's bits
}

type scalarArg struct{ v argValue }

func (s scalarArg) arg() argValue { return s.v }

// ScalarArg wraps a scalar kernel argument.
func ScalarArg[T gpu.Elem](v T) Arg {
	return scalarArg{argValue{size: elemSize[T](), elem: elemName[T](), bits: toBits(v), native: func() any { return v }}}
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
	// hostCopy, when set, is a HostBuffer copy recorded by a capture on
	// a device without driver graphs, and nothing else of launch is.
	hostCopy func() error
	k        *Kernel
	entry    string // the PTX entry that runs: spec.Entry or spec.Entry32 (index32.go)
	mod      any
	blocks   gpu.Dim3
	threads  gpu.Dim3
	shared   int
	args     []argValue
	params   []byte
	stream   any
	ctx      context.Context // nil unless launched through WithContext
	// gridSlot is a cooperative launch's grid barrier (cooperative.go);
	// the launch clears gridClearBytes from gridClear ahead of its kernel.
	gridSlot       uint64
	gridClear      uint64
	gridClearBytes int
}

// Launch runs the kernel on q over grid with args in the kernel's
// parameter order. It checks, before anything runs: that the device is
// open; the argument count, kinds and element types; that buffers are
// live, on q's device, and that every buffer the kernel writes overlaps no
// other argument; and the grid, block and shared memory against the
// device's limits (a negative dimension is an error, a zero one launches
// nothing). On the emulator and in native mode the launch completes
// before Launch returns; on a GPU it is queued, and a failed device bounds
// check surfaces from the next Sync or Download. Every fault of the kernel
// is a *DeviceError; docs/errors.md lists what each misuse returns.
func (k *Kernel) Launch(q Queue, grid Grid, args ...Arg) error {
	if q == nil {
		return fmt.Errorf("kern: %s: nil device", k.spec.Name)
	}
	dev := q.device()
	if dev == nil {
		return fmt.Errorf("kern: %s: nil device", k.spec.Name)
	}
	if err := dev.usable(); err != nil {
		return k.errorf("%w", err)
	}
	if err := k.checkSource(); err != nil {
		return err
	}
	blocks, threads, err := grid.resolve(k)
	if err != nil {
		return err
	}
	if empty(blocks) || empty(threads) {
		// A grid with a zero dimension launches nothing, as a loop over
		// zero elements runs nothing. The arguments are still checked.
		_, err := k.prepare(dev, blocks, threads, grid.shared, args, false)
		return err
	}
	l, err := k.prepare(dev, blocks, threads, grid.shared, args, true)
	if err != nil {
		return err
	}
	l.stream = q.stream()
	if k.spec.Cooperative {
		if err := k.prepareCooperative(q, dev, l); err != nil {
			return err
		}
	}
	if s := queueStream(q); s != nil && s.capture != nil {
		*s.capture = append(*s.capture, l)
		return nil
	}
	if ctx := q.launchContext(); ctx != nil {
		if err := ctx.Err(); err != nil {
			return k.errorf("not launched: %w", err)
		}
		l.ctx = ctx
	}
	if err := dev.b.launch(l); err != nil {
		if errors.Is(err, gpu.ErrAbandoned) {
			dev.breakDevice(fmt.Errorf("kern: %s is unusable: a launch of %s was stopped with threads still running, which may write its memory: %w", dev.label(), k.spec.Name, err))
		}
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

// prepare checks a launch and, when run is set, packs it for the
// backend (loading the module on first use).
func (k *Kernel) prepare(dev *Device, blocks, threads gpu.Dim3, shared int, args []Arg, run bool) (*launch, error) {
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
		case !sameElem(v.elem, p.Elem):
			// Same size, other type: running would reinterpret the bits
			// (and native mode's type assertion would panic).
			if isBuf {
				return nil, k.errorf("parameter %s: want a buffer of %s, got a buffer of %s", p.Name, p.Elem, v.elem)
			}
			return nil, k.errorf("parameter %s: want a %s scalar, got a scalar of type %s", p.Name, p.Elem, v.elem)
		}
		if isBuf {
			if !*v.live {
				return nil, k.errorf("parameter %s: buffer was freed", p.Name)
			}
			if v.dev != dev {
				return nil, k.errorf("parameter %s: buffer lives on %s, launch is on %s", p.Name, v.dev.label(), dev.label())
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
	if !run {
		return nil, nil
	}
	l.blocks, l.threads, l.shared = blocks, threads, shared
	l.entry = k.entry(l)
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

// sm90SharedPerBlock is the shared memory a block may opt in to on
// compute capability 9.0 (CUDA C Programming Guide, Table 24).
const sm90SharedPerBlock = 227 * 1024

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
	maxShared := lim.MaxSharedPerBlock
	if dev.kind == "emu" && k.spec.Module != nil && k.spec.Module.Arch == "sm_90a" {
		// An sm_90a module loads only on compute capability 9.0, whose
		// opt-in limit is 227 KiB (the emulator's own); the portable
		// 99 KiB of defaultLimits is for kernels that run anywhere.
		maxShared = max(maxShared, sm90SharedPerBlock)
	}
	if tot := l.shared + k.spec.SharedBytes; tot > maxShared {
		return k.errorf("%d bytes of shared memory (%d static + %d dynamic) exceed the device's %d per block", tot, k.spec.SharedBytes, l.shared, maxShared)
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
