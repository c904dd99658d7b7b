package cuda

import (
	"runtime"
	"sync"
	"unsafe"
)

// Launches with attributes (cuLaunchKernelEx, CUDA 11.8+). kern uses one
// attribute: programmatic stream serialization, which lets a kernel start
// while the kernel before it on the stream finishes (programmatic
// dependent launch, compute capability 9.0+; the kernel waits for it with
// griddepcontrol.wait, gpu.WaitPriorGrids).

// LaunchOptions are a launch's attributes.
type LaunchOptions struct {
	// ProgrammaticSerialization sets
	// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: the kernel
	// may launch before the previous kernel on the stream completes.
	ProgrammaticSerialization bool
	// Cooperative sets CU_LAUNCH_ATTRIBUTE_COOPERATIVE: every block is
	// resident at once (the driver refuses a larger grid with
	// ErrorCooperativeLaunchTooLarge), so blocks may wait for each other.
	Cooperative bool
}

// launchAttrCooperative is CU_LAUNCH_ATTRIBUTE_COOPERATIVE (cuda.h).
const launchAttrCooperative = 2

// launchAttrProgrammaticStreamSerialization is
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (cuda.h).
const launchAttrProgrammaticStreamSerialization = 6

// launchAttr is CUlaunchAttribute: a 4-byte id, padding to 8, and a
// 64-byte union of values (cuda.h, CUDA 12).
type launchAttr struct {
	id    uint32
	_     uint32
	value [64]byte
}

// launchConfig is CUlaunchConfig: seven unsigned ints, then (8-aligned)
// the stream, the attribute array and its length.
type launchConfig struct {
	grid, block [3]uint32
	shared      uint32
	_           uint32
	stream      uintptr
	attrs       uintptr
	numAttrs    uint32
	_           uint32
}

// exLaunch is one cuLaunchKernelEx call's memory, pooled: heap objects do
// not move, so their addresses may pass as uintptrs (frame.go).
type exLaunch struct {
	cfg   launchConfig
	attrs [2]launchAttr
}

var exLaunches = sync.Pool{New: func() any { return new(exLaunch) }}

// CanLaunchEx reports whether the driver has cuLaunchKernelEx.
func CanLaunchEx() bool { return current().cuLaunchKernelEx.Addr != 0 }

// LaunchEx is Launch with attributes (cuLaunchKernelEx). Without options
// set it is Launch. It fails with ErrorNotSupported (or the driver's
// error) where an attribute is not supported, for example programmatic
// serialization below compute capability 9.0.
func LaunchEx(fn Function, grid, block [3]uint32, sharedBytes uint32, s Stream, args *Args, o LaunchOptions) error {
	if !o.ProgrammaticSerialization && !o.Cooperative {
		return Launch(fn, grid, block, sharedBytes, s, args)
	}
	d := current()
	var params uintptr
	if args != nil && args.n > 0 {
		forceHeap(uintptr(unsafe.Pointer(args)))
		params = args.pointers()
	}
	x := exLaunches.Get().(*exLaunch)
	*x = exLaunch{}
	n, what := 0, ""
	if o.ProgrammaticSerialization {
		x.attrs[n].id = launchAttrProgrammaticStreamSerialization
		x.attrs[n].value[0] = 1 // int programmaticStreamSerializationAllowed = 1, little-endian
		n, what = n+1, what+" programmatic serialization"
	}
	if o.Cooperative {
		x.attrs[n].id = launchAttrCooperative
		x.attrs[n].value[0] = 1 // int cooperative = 1
		n, what = n+1, what+" cooperative"
	}
	x.cfg = launchConfig{grid: grid, block: block, shared: sharedBytes, stream: uintptr(s),
		attrs: uintptr(unsafe.Pointer(&x.attrs[0])), numAttrs: uint32(n)}
	f := getFrame()
	f.args[0] = uintptr(unsafe.Pointer(&x.cfg))
	f.args[1] = uintptr(fn)
	f.args[2] = params
	f.args[3] = 0 // extra = NULL
	r, err := d.callFrame(&d.cuLaunchKernelEx, f, 4)
	putFrame(f)
	runtime.KeepAlive(args)
	runtime.KeepAlive(x)
	exLaunches.Put(x)
	return d.launched(&d.cuLaunchKernelEx, r, err, what, s, grid, block, sharedBytes, args)
}
