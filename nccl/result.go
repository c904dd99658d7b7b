package nccl

import (
	"strconv"
	"unsafe"

	"github.com/gokern/kern/internal/dynlib"
)

// Result is an ncclResult_t, the code every NCCL call returns. A Result is
// also an error, so errors.Is(err, nccl.InvalidArgument) works on any
// *Error of this package.
type Result int32

// Result codes from nccl.h. The values are the library's ABI.
const (
	Success            Result = 0
	UnhandledCudaError Result = 1
	SystemError        Result = 2
	InternalError      Result = 3
	InvalidArgument    Result = 4
	InvalidUsage       Result = 5
	RemoteError        Result = 6
	InProgress         Result = 7
)

var resultTable = dynlib.Codes[Result]{
	Success:            {Name: "ncclSuccess", Text: "no error"},
	UnhandledCudaError: {Name: "ncclUnhandledCudaError", Text: "a call to CUDA failed"},
	SystemError:        {Name: "ncclSystemError", Text: "a call to the system failed"},
	InternalError:      {Name: "ncclInternalError", Text: "an internal check failed"},
	InvalidArgument:    {Name: "ncclInvalidArgument", Text: "an argument is not valid"},
	InvalidUsage:       {Name: "ncclInvalidUsage", Text: "the call is not valid here"},
	RemoteError:        {Name: "ncclRemoteError", Text: "a remote process failed or exited"},
	InProgress:         {Name: "ncclInProgress", Text: "a non-blocking operation is in progress"},
}

// String is the code's name in nccl.h, or "ncclResult_t(N)".
func (r Result) String() string { return resultTable.Name(r, "ncclResult_t") }

// Error makes a Result usable as an error and as an errors.Is target.
func (r Result) Error() string {
	if t := resultTable.Text(r); t != "" {
		return r.String() + ": " + t
	}
	return r.String()
}

// Error is a failed NCCL call.
type Error struct {
	Call   string // entry point, e.g. "ncclAllReduce"
	Result Result
	Text   string // from ncclGetErrorString
	Detail string // set when the error did not come from NCCL
}

func (e *Error) Error() string {
	s := "nccl: " + e.Call + ": " + e.Result.String() + " (" + strconv.Itoa(int(e.Result)) + ")"
	if e.Text != "" {
		s += ": " + e.Text
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Is reports whether target is the Result e carries.
func (e *Error) Is(target error) bool {
	r, ok := target.(Result)
	return ok && r == e.Result
}

func (l *library) newError(call string, r Result) *Error {
	e := &Error{Call: call, Result: r, Text: resultTable.Text(r)}
	if p := rawCall(l.ncclGetErrorString.Addr, uintptr(uint32(r))); p != 0 {
		// p is a string in the library's static data, not Go memory.
		e.Text = dynlib.GoString(*(**byte)(unsafe.Pointer(&p)))
	}
	return e
}
