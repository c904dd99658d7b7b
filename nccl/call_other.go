//go:build !amd64 && !arm64

package nccl

// NCCL ships for amd64 and arm64 only.
func (l *library) initRank(out *uintptr, nranks, rank int, id *UniqueID) error {
	return &Error{Call: "ncclCommInitRank", Result: InternalError, Detail: "NCCL runs on amd64 and arm64 only"}
}
