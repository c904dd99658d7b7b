package nccl

import "github.com/gokern/kern/internal/dynlib"

// proc is one entry point: the name it was found under and its address,
// or 0 when the library does not export it.
type proc = dynlib.Proc

// procs holds every entry point this package calls, named as exported.
type procs struct {
	ncclGetVersion, ncclGetUniqueId, ncclCommInitRank, ncclCommDestroy proc
	ncclCommCount, ncclCommUserRank, ncclGetErrorString                proc
	ncclAllReduce, ncclAllGather, ncclBroadcast                        proc
	ncclGroupStart, ncclGroupEnd                                       proc
	ncclCommAbort                                                      proc
}

// symbolTable lists every entry point. Everything here has been in
// nccl.h since NCCL 2.0 (ncclBroadcast since 2.2, ncclGetVersion 2.3),
// so all are required except the two queries and ncclCommAbort (2.4).
func (l *library) symbolTable() []dynlib.Symbol {
	req, opt := dynlib.Req, dynlib.Opt
	return []dynlib.Symbol{
		req(&l.ncclGetVersion, "ncclGetVersion"),
		req(&l.ncclGetUniqueId, "ncclGetUniqueId"),
		req(&l.ncclCommInitRank, "ncclCommInitRank"),
		req(&l.ncclCommDestroy, "ncclCommDestroy"),
		opt(&l.ncclCommCount, "ncclCommCount"),
		opt(&l.ncclCommUserRank, "ncclCommUserRank"),
		req(&l.ncclGetErrorString, "ncclGetErrorString"),
		req(&l.ncclAllReduce, "ncclAllReduce"),
		req(&l.ncclAllGather, "ncclAllGather"),
		req(&l.ncclBroadcast, "ncclBroadcast"),
		req(&l.ncclGroupStart, "ncclGroupStart"),
		req(&l.ncclGroupEnd, "ncclGroupEnd"),
		opt(&l.ncclCommAbort, "ncclCommAbort"),
	}
}

func (l *library) resolve(lookup func(name string) uintptr) (missing []string) {
	return dynlib.Resolve(l.symbolTable(), lookup)
}
