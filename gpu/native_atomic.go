package gpu

// Atomics of native mode, and the bit patterns of Word values that atomics
// and warp collectives move.
//
// An atomic read-modify-write is a compare-and-swap loop on the cell's bit
// pattern (sync/atomic on its 32 or 64 bits), so it is atomic against every
// other atomic of the launch, whatever the element type; floats are
// compared and stored as bits, so -0 and NaN payloads survive. A plain load
// or store of a cell that atomics update concurrently is a data race, as it
// is on a GPU. 64-bit atomics assume a 64-bit host (8-byte aligned cells).

import (
	"sync/atomic"
	"unsafe"
)

// atomicRMW replaces *p with op(*p) atomically and returns the old value.
// op may run more than once when other threads update *p concurrently; it
// must be a pure function of its argument.
func atomicRMW[T Word](p *T, op func(T) T) T {
	if unsafe.Sizeof(*p) == 4 {
		cell := (*uint32)(unsafe.Pointer(p))
		for {
			old := atomic.LoadUint32(cell)
			v := op(*(*T)(unsafe.Pointer(&old)))
			nv := *(*uint32)(unsafe.Pointer(&v))
			if nv == old || atomic.CompareAndSwapUint32(cell, old, nv) {
				return *(*T)(unsafe.Pointer(&old))
			}
		}
	}
	cell := (*uint64)(unsafe.Pointer(p))
	for {
		old := atomic.LoadUint64(cell)
		v := op(*(*T)(unsafe.Pointer(&old)))
		nv := *(*uint64)(unsafe.Pointer(&v))
		if nv == old || atomic.CompareAndSwapUint64(cell, old, nv) {
			return *(*T)(unsafe.Pointer(&old))
		}
	}
}

// bitsEqual reports whether a and b have the same bit pattern (so +0 and -0
// differ and a NaN equals itself), as atom.cas compares.
func bitsEqual[T Word](a, b T) bool { return wordBits(a) == wordBits(b) }

// wordBits returns the bit pattern of v, zero-extended to 64 bits.
func wordBits[T Word](v T) uint64 {
	if unsafe.Sizeof(v) == 4 {
		return uint64(*(*uint32)(unsafe.Pointer(&v)))
	}
	return *(*uint64)(unsafe.Pointer(&v))
}

// wordFrom is the inverse of wordBits.
func wordFrom[T Word](bits uint64) T {
	var v T
	if unsafe.Sizeof(v) == 4 {
		*(*uint32)(unsafe.Pointer(&v)) = uint32(bits)
	} else {
		*(*uint64)(unsafe.Pointer(&v)) = bits
	}
	return v
}
