package cublas

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/gokern/kern/internal/dynlib"
)

// Status is a cublasStatus_t, the code every cuBLAS call returns. A Status
// is also an error, so errors.Is(err, cublas.StatusNotSupported) works on
// any *Error of this package.
type Status int32

// Status codes from cublas_api.h. The values are the library's ABI.
const (
	StatusSuccess         Status = 0
	StatusNotInitialized  Status = 1
	StatusAllocFailed     Status = 3
	StatusInvalidValue    Status = 7
	StatusArchMismatch    Status = 8
	StatusMappingError    Status = 11
	StatusExecutionFailed Status = 13
	StatusInternalError   Status = 14
	StatusNotSupported    Status = 15
	StatusLicenseError    Status = 16
)

// statusTable is the built-in name and description of each code, used
// when the library has no cublasGetStatusName/String (before 11.4).
var statusTable = dynlib.Codes[Status]{
	StatusSuccess:         {Name: "CUBLAS_STATUS_SUCCESS", Text: "success"},
	StatusNotInitialized:  {Name: "CUBLAS_STATUS_NOT_INITIALIZED", Text: "the library was not initialized (no usable CUDA context or driver?)"},
	StatusAllocFailed:     {Name: "CUBLAS_STATUS_ALLOC_FAILED", Text: "a resource allocation failed"},
	StatusInvalidValue:    {Name: "CUBLAS_STATUS_INVALID_VALUE", Text: "an unsupported value or parameter was passed"},
	StatusArchMismatch:    {Name: "CUBLAS_STATUS_ARCH_MISMATCH", Text: "the device does not support the requested feature"},
	StatusMappingError:    {Name: "CUBLAS_STATUS_MAPPING_ERROR", Text: "access to GPU memory failed"},
	StatusExecutionFailed: {Name: "CUBLAS_STATUS_EXECUTION_FAILED", Text: "the GPU program failed to execute"},
	StatusInternalError:   {Name: "CUBLAS_STATUS_INTERNAL_ERROR", Text: "an internal cuBLAS operation failed"},
	StatusNotSupported:    {Name: "CUBLAS_STATUS_NOT_SUPPORTED", Text: "the requested functionality is not supported"},
	StatusLicenseError:    {Name: "CUBLAS_STATUS_LICENSE_ERROR", Text: "license check failed"},
}

// String returns the cuBLAS name of s, e.g. "CUBLAS_STATUS_INVALID_VALUE",
// from the built-in table, or "cublasStatus_t(N)" for an unknown code.
func (s Status) String() string {
	return statusTable.Name(s, "cublasStatus_t")
}

// Error makes a Status usable as an error and as an errors.Is target.
func (s Status) Error() string {
	if t := statusTable.Text(s); t != "" {
		return s.String() + ": " + t
	}
	return s.String()
}

// Error is a failed cuBLAS call.
type Error struct {
	Call   string // entry point as exported, e.g. "cublasSgemm_v2"
	Status Status
	Name   string // from cublasGetStatusName, e.g. "CUBLAS_STATUS_INVALID_VALUE"
	Text   string // from cublasGetStatusString
	// Detail is set when the error did not come from cuBLAS: an argument
	// that does not fit a C int, a destroyed Handle, a missing entry point.
	Detail string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("cublas: ")
	b.WriteString(e.Call)
	b.WriteString(": ")
	b.WriteString(e.Name)
	b.WriteString(" (")
	b.WriteString(strconv.Itoa(int(e.Status)))
	b.WriteString(")")
	if e.Text != "" {
		b.WriteString(": ")
		b.WriteString(e.Text)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Is reports whether target is the Status e carries.
func (e *Error) Is(target error) bool {
	s, ok := target.(Status)
	return ok && s == e.Status
}

// newError builds the *Error for a failed call, asking the library for the
// status's name and text and falling back to the built-in table.
func (l *library) newError(call string, s Status) *Error {
	e := &Error{Call: call, Status: s, Name: s.String(), Text: statusTable.Text(s)}
	if name, ok := l.statusText(&l.cublasGetStatusName, s); ok {
		e.Name = name
	}
	if text, ok := l.statusText(&l.cublasGetStatusString, s); ok {
		e.Text = text
	}
	return e
}

// detailError is an *Error that did not come from a cuBLAS status.
func detailError(call string, s Status, detail string) *Error {
	return &Error{Call: call, Status: s, Name: s.String(), Text: statusTable.Text(s), Detail: detail}
}

// statusText calls cublasGetStatusName or cublasGetStatusString, which
// return a pointer to a static C string.
func (l *library) statusText(p *proc, s Status) (string, bool) {
	if p.Addr == 0 {
		return "", false
	}
	r := rawCall(p.Addr, uintptr(uint32(s)))
	if r == 0 {
		return "", false
	}
	// r is the address of a string in the library's static data, not Go
	// memory; reading it through a pointer built this way keeps vet's
	// unsafeptr check quiet without pretending otherwise.
	return dynlib.GoString(*(**byte)(unsafe.Pointer(&r))), true
}
