package nccl

import "unsafe"

// initRank calls ncclCommInitRank under AAPCS64: a composite larger than
// 16 bytes is copied by the caller and passed as a pointer to the copy in
// the next integer register (x2), so rank goes in x3. The copy is id,
// converted in the call expression so //go:uintptrescapes keeps it on the
// heap for the call.
func (l *library) initRank(out *uintptr, nranks, rank int, id *UniqueID) error {
	return l.call(&l.ncclCommInitRank, uintptr(unsafe.Pointer(out)), uintptr(int64(int32(nranks))),
		uintptr(unsafe.Pointer(id)), uintptr(int64(int32(rank))))
}
