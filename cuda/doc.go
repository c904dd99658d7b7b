// Package cuda is a thin binding to the NVIDIA CUDA driver API (libcuda.so.1
// on Linux, nvcuda.dll on Windows), loaded at run time with purego.
//
// # Why this shape
//
// kern must build with CGO_ENABLED=0 and cross-compile, and must run on
// machines without a GPU (where it falls back to the PTX emulator). So the
// driver is not linked: Init opens the library, resolves every entry point
// by name, and each call is one purego.SyscallN. A machine without a driver
// gets a *LoadError matching ErrNoDriver from Init, never a crash, and a
// driver too old for an optional feature (graphs, stream-ordered
// allocation) fails only the calls that need it.
//
// The driver exports several ABIs of many functions: cuda.h maps cuMemAlloc
// to cuMemAlloc_v2 and so on, and the unversioned symbols are the CUDA 3.x
// ABI with 32-bit sizes. This package calls the versioned names
// (symbols.go lists every one), which is also what the stub libcuda in
// testdata/stub checks: it exports the old names as decoys that fail.
//
// The surface uses Go types: typed handles (Device, Context, Module,
// Function, Stream, Event, Graph, GraphExec, DevicePtr), named attribute
// constants, and one error type, *Error, naming the failed entry point
// with the driver's own name and description of the code. A failed PTX JIT
// carries the compiler's log in Error.Log.
//
// # Threads
//
// The driver's current context is per OS thread, and Go moves goroutines
// between threads. Run everything that needs a context inside
// Context.Do, which locks the goroutine to its thread and makes the context
// current there:
//
//	if err := cuda.Init(); err != nil { ... }
//	dev, _ := cuda.DeviceGet(0)
//	ctx, _ := cuda.PrimaryCtxRetain(dev)
//	defer ctx.Release()
//	err := ctx.Do(func() error {
//		p, err := cuda.MemAlloc(4 * n)
//		...
//		return cuda.Launch(fn, grid, block, 0, 0, args)
//	})
//
// Device queries (DeviceGet, Device.Attribute, ...) need no context.
//
// # Launching
//
// cuLaunchKernel wants an array of pointers, one per kernel parameter,
// each pointing at the parameter's value. Args packs the values and builds
// that array in memory the garbage collector will not move; a launch site
// that keeps one Args and Resets it launches without allocating.
//
// # Debugging
//
// KERN_CUDA_DEBUG=1 logs every driver call, its arguments and result, and
// each launch's parameter bytes, to stderr. KERN_CUDA_DEBUG=sync also
// synchronizes after every launch, so a kernel fault is reported by the
// Launch that caused it rather than by some later call. KERN_LIBCUDA names
// the library to load instead of the system driver.
//
// # Tests
//
// The tests build testdata/stub/libcuda_stub.c, a fake driver in C with
// host memory for device memory, thread-local current contexts and a call
// recorder, and check the ABI against it: argument order, the kernel
// parameter array for every parameter type, error and JIT-log plumbing,
// concurrent launches. gpu_test.go (build tag gpu) runs against a real
// driver.
package cuda
