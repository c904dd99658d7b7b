package cuda

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/gokern/kern/internal/dynlib"
)

// Error is a failed driver call. Every error this package returns for a
// driver call is an *Error; library loading failures are a *LoadError.
//
// errors.Is(err, cuda.ErrorOutOfMemory) reports whether Code matches.
type Error struct {
	Call string // driver entry point, as exported: "cuMemAlloc_v2"
	Code Result
	Name string // from cuGetErrorName, e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Text string // from cuGetErrorString, e.g. "out of memory"
	// Log is extra detail when there is any: the PTX JIT error log of a
	// failed module load, or why an entry point is unavailable.
	Log string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("cuda: ")
	b.WriteString(e.Call)
	b.WriteString(": ")
	b.WriteString(e.Name)
	b.WriteString(" (")
	b.WriteString(strconv.Itoa(int(e.Code)))
	b.WriteString(")")
	if e.Text != "" {
		b.WriteString(": ")
		b.WriteString(e.Text)
	}
	if log := strings.TrimRight(e.Log, "\n\x00 "); log != "" {
		b.WriteString("\n")
		b.WriteString(log)
	}
	return b.String()
}

// Is reports whether target is the Result e carries.
func (e *Error) Is(target error) bool {
	r, ok := target.(Result)
	return ok && r == e.Code
}

// newError builds the *Error for a failed call, asking the driver for the
// name and text of code and falling back to the built-in table.
func (d *driver) newError(call string, code Result) *Error {
	return &Error{Call: call, Code: code, Name: d.errorName(code), Text: d.errorString(code)}
}

// errorName asks cuGetErrorName; the driver answers CUDA_ERROR_INVALID_VALUE
// (and a NULL string) for codes it does not know.
func (d *driver) errorName(r Result) string {
	if s, ok := d.errorText(&d.cuGetErrorName, r); ok {
		return s
	}
	return builtinName(r)
}

func (d *driver) errorString(r Result) string {
	if s, ok := d.errorText(&d.cuGetErrorString, r); ok {
		return s
	}
	return builtinText(r)
}

// errorText calls cuGetErrorName or cuGetErrorString. These are called
// directly, not through call, so a failing lookup is never itself logged or
// turned into an error.
func (d *driver) errorText(p *proc, r Result) (string, bool) {
	if p.Addr == 0 {
		return "", false
	}
	var s *byte
	if syscallResult(p.Addr, uintptr(uint32(r)), uintptr(unsafe.Pointer(&s))) != Success || s == nil {
		return "", false
	}
	return dynlib.GoString(s), true
}

// ErrorName returns the driver's name for r ("CUDA_ERROR_INVALID_PTX"),
// or the built-in name when the driver is not loaded or does not know r.
func ErrorName(r Result) string { return current().errorName(r) }

// ErrorString returns the driver's description of r, or the built-in one
// when the driver is not loaded or does not know r.
func ErrorString(r Result) string { return current().errorString(r) }
