package cublas

import (
	"math"
	"strconv"

	"github.com/ebitengine/purego"
)

// How a call reaches cuBLAS.
//
// Every entry point bound here takes only integer and pointer arguments
// (alpha and beta are passed by pointer in the default host pointer
// mode) and returns a cublasStatus_t, so each call is one
// purego.SyscallN. GemmEx has 19 arguments: past the six (SysV) or four
// (Windows) integer registers they go on the stack in 8-byte slots, which
// SyscallN lays out for up to 32 (purego) and 42 (Windows) arguments.
// C int parameters receive the low 32 bits of their slot.
//
// Pointers cross as uintptr; //go:uintptrescapes on call keeps the Go
// memory an argument points to (alpha, beta, out-parameters) alive and in
// place for the call, as in package cuda.

// call invokes p and turns a failing status into an *Error.
//
//go:uintptrescapes
func (l *library) call(p *proc, args ...uintptr) error {
	if p.Addr == 0 {
		return l.unavailable(p)
	}
	r, _, _ := purego.SyscallN(p.Addr, args...)
	if s := status(r); s != StatusSuccess {
		return l.newError(p.Name, s)
	}
	return nil
}

// rawCall calls fn with no error conversion.
//
//go:uintptrescapes
func rawCall(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// status extracts a cublasStatus_t (a 32-bit C enum) from a return
// register whose upper half the C ABI leaves undefined.
func status(r uintptr) Status { return Status(int32(uint32(r))) }

// unavailable is the error for calling an optional entry point the
// library lacks.
func (l *library) unavailable(p *proc) error {
	return detailError(p.Name, StatusNotSupported, l.path+" does not export "+p.Name+"; this needs a newer cuBLAS")
}

// cInt converts a Go int argument to a C int, or reports which argument
// of which call does not fit.
func cInt(call, arg string, v int) (uintptr, error) {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, detailError(call, StatusInvalidValue, arg+" = "+strconv.Itoa(v)+" does not fit cuBLAS's 32-bit int")
	}
	return uintptr(int64(int32(v))), nil
}
