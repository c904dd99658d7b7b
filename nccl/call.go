package nccl

import "github.com/ebitengine/purego"

// How a call reaches NCCL: every entry point takes integers, pointers
// and size_t, and returns an ncclResult_t, so each is one
// purego.SyscallN; pointers cross as uintptr and //go:uintptrescapes
// keeps the Go memory they point to (out-parameters, the unique id) alive
// and in place for the call. The exception, ncclCommInitRank's by-value
// struct, is in call_<arch>.go.

//go:uintptrescapes
func (l *library) call(p *proc, args ...uintptr) error {
	if p.Addr == 0 {
		return &Error{Call: p.Name, Result: InternalError, Detail: l.path + " does not export " + p.Name}
	}
	r, _, _ := purego.SyscallN(p.Addr, args...)
	if res := result(r); res != Success {
		return l.newError(p.Name, res)
	}
	return nil
}

//go:uintptrescapes
func rawCall(fn uintptr, args ...uintptr) uintptr {
	if fn == 0 {
		return 0
	}
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// result extracts a 32-bit C enum from a return register whose upper half
// the C ABI leaves undefined.
func result(r uintptr) Result { return Result(int32(uint32(r))) }
