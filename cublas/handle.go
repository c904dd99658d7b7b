package cublas

import (
	"unsafe"

	"github.com/gokern/kern/cuda"
)

// Handle is a cuBLAS context (cublasHandle_t) bound to one CUDA context.
// Every method runs inside that context's Do, so a Handle can be used
// from any goroutine, but not from two at once: cuBLAS handles are not
// safe for concurrent use. Make one per goroutine, or guard it.
type Handle struct {
	lib    *library
	ctx    cuda.Context
	h      uintptr // cublasHandle_t; 0 once destroyed
	stream cuda.Stream
}

// Create loads cuBLAS if needed and creates a handle on ctx. cuBLAS
// allocates its workspace in ctx's device memory; Destroy frees it.
func Create(ctx cuda.Context) (*Handle, error) {
	lib, err := current()
	if err != nil {
		return nil, err
	}
	h := &Handle{lib: lib, ctx: ctx}
	var raw uintptr
	err = ctx.Do(func() error {
		return lib.call(&lib.cublasCreate, uintptr(unsafe.Pointer(&raw)))
	})
	if err != nil {
		return nil, err
	}
	h.h = raw
	return h, nil
}

// Context is the CUDA context the handle was created on.
func (h *Handle) Context() cuda.Context { return h.ctx }

// do runs fn in the handle's context, after checking the handle is live.
func (h *Handle) do(p *proc, fn func() error) error {
	if h.h == 0 {
		return detailError(p.Name, StatusNotInitialized, "the Handle was destroyed")
	}
	return h.ctx.Do(fn)
}

// SetStream makes later calls on h queue their work on s (0 is the
// context's default stream). cuBLAS calls return once the work is queued;
// synchronize s, or record an event on it, to wait for results.
func (h *Handle) SetStream(s cuda.Stream) error {
	l := h.lib
	err := h.do(&l.cublasSetStream, func() error {
		return l.call(&l.cublasSetStream, h.h, uintptr(s))
	})
	if err == nil {
		h.stream = s
	}
	return err
}

// Stream is the stream last set with SetStream (0, the default stream,
// until then).
func (h *Handle) Stream() cuda.Stream { return h.stream }

// SetMathMode sets the handle's math mode: TF32TensorOpMath lets Sgemm
// use TF32 tensor cores.
func (h *Handle) SetMathMode(m MathMode) error {
	l := h.lib
	return h.do(&l.cublasSetMathMode, func() error {
		return l.call(&l.cublasSetMathMode, h.h, uintptr(uint32(m)))
	})
}

// Version is cuBLAS's version, as major*10000 + minor*100 + patch
// (120405 is 12.4.5).
func (h *Handle) Version() (int, error) {
	l := h.lib
	var v int32
	err := h.do(&l.cublasGetVersion, func() error {
		return l.call(&l.cublasGetVersion, h.h, uintptr(unsafe.Pointer(&v)))
	})
	return int(v), err
}

// Library is the path or name of the cuBLAS library the handle uses.
func (h *Handle) Library() string { return h.lib.path }

// Destroy releases the handle and its workspace. Work it queued is
// finished first. Destroying twice is an error.
func (h *Handle) Destroy() error {
	l := h.lib
	err := h.do(&l.cublasDestroy, func() error {
		return l.call(&l.cublasDestroy, h.h)
	})
	if err == nil {
		h.h = 0
	}
	return err
}
