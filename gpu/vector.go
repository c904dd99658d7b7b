package gpu

// Vectorised global memory access: one 32-, 64- or 128-bit ld/st (ld.v2,
// ld.v4) instead of several scalar ones. The total width must be 32, 64 or
// 128 bits (Load2 of 16-, 32- or 64-bit elements, Load4 of 8-, 16- or
// 32-bit elements), and
// i must be a multiple of the vector length: buffers are 256-byte aligned, so
// that makes the address aligned as the hardware requires. The elements read
// or written are s[i .. i+n-1], each bounds-checked.

// Load2 returns s[i], s[i+1] in one load.
func Load2[T Elem](s []T, i int) [2]T { return [2]T{s[i], s[i+1]} }

// Load4 returns s[i .. i+3] in one load.
func Load4[T Elem](s []T, i int) [4]T { return [4]T{s[i], s[i+1], s[i+2], s[i+3]} }

// Store2 writes v to s[i], s[i+1] in one store.
func Store2[T Elem](s []T, i int, v [2]T) { s[i], s[i+1] = v[0], v[1] }

// Store4 writes v to s[i .. i+3] in one store.
func Store4[T Elem](s []T, i int, v [4]T) {
	s[i], s[i+1], s[i+2], s[i+3] = v[0], v[1], v[2], v[3]
}
