package cuda

import (
	"strconv"
	"strings"

	"github.com/ebitengine/purego"
)

// How a call reaches the driver.
//
// Every entry point returns a CUresult and takes only integer and pointer
// arguments, so one purego.SyscallN per call is the whole shim: no
// RegisterFunc (reflection, and it panics on a missing symbol), no cgo.
//
// Pointers cross as uintptr. unsafe.Pointer rule 4 keeps a pointed-to
// object alive and in place only while the conversion is written inside the
// call's argument list, which is why call and raw carry
// //go:uintptrescapes: callers write call(&d.cuX, uintptr(unsafe.Pointer(&v)))
// and the compiler moves v to the heap (which never moves) and keeps it live
// for the duration. Out-parameters therefore cost one small allocation each;
// the launch path (launch.go) avoids them.

// call invokes p and turns a failing CUresult into an *Error.
//
//go:uintptrescapes
func (d *driver) call(p *proc, args ...uintptr) error {
	r, err := d.raw(p, args...)
	if err != nil || r == Success {
		return err
	}
	return d.newError(p.Name, r)
}

// raw invokes p and returns its CUresult unconverted, for the calls where a
// code other than CUDA_SUCCESS is an answer (cuStreamQuery's NOT_READY).
// The error is non-nil only when p is unavailable.
//
//go:uintptrescapes
func (d *driver) raw(p *proc, args ...uintptr) (Result, error) {
	if p.Addr == 0 {
		return 0, d.unavailable(p)
	}
	r, _, _ := purego.SyscallN(p.Addr, args...)
	res := cuResult(r)
	if d.debug != debugOff {
		d.logCall(p.Name, args, res)
	}
	return res, nil
}

// syscallResult calls fn with no logging and no error conversion.
//
//go:uintptrescapes
func syscallResult(fn uintptr, args ...uintptr) Result {
	r, _, _ := purego.SyscallN(fn, args...)
	return cuResult(r)
}

// cuResult extracts a CUresult (a 32-bit C enum) from a return register
// whose upper half the C ABI leaves undefined.
func cuResult(r uintptr) Result { return Result(int32(uint32(r))) }

// debugMode is the KERN_CUDA_DEBUG setting of a driver.
type debugMode uint8

const (
	debugOff  debugMode = iota
	debugLog            // log every call
	debugSync           // log, and synchronize after every launch
)

func parseDebug(v string) debugMode {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "off":
		return debugOff
	case "sync":
		return debugSync
	default:
		return debugLog
	}
}

// logCall writes one line per driver call: name, arguments in hex, result.
func (d *driver) logCall(name string, args []uintptr, r Result) {
	b := make([]byte, 0, 128)
	b = append(b, "cuda: "...)
	b = append(b, name...)
	b = append(b, '(')
	for i, a := range args {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, uint64(a), 16)
	}
	b = append(b, ") = "...)
	b = append(b, d.errorName(r)...)
	b = append(b, '\n')
	d.logMu.Lock()
	defer d.logMu.Unlock()
	if d.logw != nil {
		_, _ = d.logw.Write(b)
	}
}
