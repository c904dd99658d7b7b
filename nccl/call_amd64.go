package nccl

import "unsafe"

// initRank calls ncclCommInitRank(comm**, int nranks, ncclUniqueId id,
// int rank) under System V amd64: id is larger than 16 bytes, so it is of
// class MEMORY and goes on the stack in 8-byte words, while the integer
// arguments around it take the registers in order (rdi, rsi, rdx).
// SyscallN fills six registers before it spills, so three zero words pad
// rcx, r8 and r9 and the id's sixteen words become the stack arguments.
// The out-pointer is converted in the call expression, so
// //go:uintptrescapes on call moves it to the heap and keeps it there.
func (l *library) initRank(out *uintptr, nranks, rank int, id *UniqueID) error {
	w := (*[len(id) / 8]uintptr)(unsafe.Pointer(&id[0]))
	return l.call(&l.ncclCommInitRank, uintptr(unsafe.Pointer(out)), uintptr(int64(int32(nranks))), uintptr(int64(int32(rank))), 0, 0, 0,
		w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12], w[13], w[14], w[15])
}
