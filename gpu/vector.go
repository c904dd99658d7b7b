package gpu

// Vectorised global memory access: one 32-, 64- or 128-bit ld/st (ld.v2,
// ld.v4) instead of several scalar ones. The total width must be 32, 64 or
// 128 bits (Load2 of 16-, 32- or 64-bit elements, Load4 of 8-, 16- or
// 32-bit elements, Load8 of 16-bit elements: eight halves), and the address of s[i] must be a multiple of that
// width, as the hardware requires: buffers are 256-byte aligned, so that
// holds when i is a multiple of the vector length (and s, if a re-slice,
// starts at such an offset). The elements read or written are
// s[i .. i+n-1], each bounds-checked; then the alignment is checked (the
// compiler leaves the check out where it can prove it), and a misaligned
// access panics on every device with the same message.

import (
	"strconv"
	"unsafe"
)

// Load2 returns s[i], s[i+1] in one load.
func Load2[T Elem](s []T, i int) [2]T {
	v := [2]T{s[i], s[i+1]}
	checkVecAlign("Load2", s, i, 2)
	return v
}

// Load4 returns s[i .. i+3] in one load.
func Load4[T Elem](s []T, i int) [4]T {
	v := [4]T{s[i], s[i+1], s[i+2], s[i+3]}
	checkVecAlign("Load4", s, i, 4)
	return v
}

// Store2 writes v to s[i], s[i+1] in one store.
func Store2[T Elem](s []T, i int, v [2]T) {
	_, _ = s[i], s[i+1]
	checkVecAlign("Store2", s, i, 2)
	s[i], s[i+1] = v[0], v[1]
}

// Store4 writes v to s[i .. i+3] in one store.
func Store4[T Elem](s []T, i int, v [4]T) {
	_, _, _, _ = s[i], s[i+1], s[i+2], s[i+3]
	checkVecAlign("Store4", s, i, 4)
	s[i], s[i+1], s[i+2], s[i+3] = v[0], v[1], v[2], v[3]
}

// Load8 returns s[i .. i+7], 16-bit elements (gpu.Half, gpu.BFloat16,
// int16, uint16), in one 128-bit load.
func Load8[T Elem](s []T, i int) [8]T {
	v := [8]T{s[i], s[i+1], s[i+2], s[i+3], s[i+4], s[i+5], s[i+6], s[i+7]}
	checkVecAlign("Load8", s, i, 8)
	return v
}

// Load8Stream is Load8 for data that is read once and in whole runs, such
// as a weight matrix streamed by a GEMV: the load does not allocate in L1
// and asks L2 to fetch the aligned 256 bytes around the address from
// DRAM in one request (ld.global.L1::no_allocate.L2::256B, PTX ISA
// §9.7.9.8 "ld"; PTX 7.4, sm_80), so that the next loads of those bytes
// find them in L2 or on their way. s must be in global memory. The
// qualifiers are hints: the values are Load8's.
func Load8Stream[T Elem](s []T, i int) [8]T {
	v := [8]T{s[i], s[i+1], s[i+2], s[i+3], s[i+4], s[i+5], s[i+6], s[i+7]}
	checkVecAlign("Load8Stream", s, i, 8)
	return v
}

// Store8 writes v to s[i .. i+7], 16-bit elements, in one 128-bit store.
func Store8[T Elem](s []T, i int, v [8]T) {
	_, _ = s[i], s[i+7]
	checkVecAlign("Store8", s, i, 8)
	copy(s[i:i+8], v[:])
}

// checkVecAlign panics unless &s[i] is a multiple of n elements' size.
// Native-mode buffers are Go allocations of at least 16 bytes whenever a
// 16-byte access fits in them, which Go aligns to 16 bytes, so the
// address tells what it would on a GPU. The message matches the
// compiler's (compiler/vecalign.go).
func checkVecAlign[T Elem](name string, s []T, i, n int) {
	w := n * int(unsafe.Sizeof(s[i]))
	if uintptr(unsafe.Pointer(&s[i]))%uintptr(w) != 0 {
		panic("gpu." + name + ": misaligned access: the address of s[i] must be a multiple of " + strconv.Itoa(w) + " bytes (i a multiple of the vector length)")
	}
}
