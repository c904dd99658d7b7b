// gpu.PackHalf2(s[i], s[i+1]) as one 32-bit load where s[i] is provably
// 4-byte aligned (compiler/pack2.go, align.go), and the cases that stay
// two 16-bit loads.
package pack2

import "github.com/gokern/kern/gpu"

// Even: i = 2·tid is even and a is a buffer (256-byte aligned): one ld.u32
// and one bounds check per pair.
//
//kern:kernel block=128
func Even(t gpu.Thread, a []gpu.Half, b []gpu.BFloat16, out []uint32) {
	i := 2 * t.GlobalX()
	out[t.GlobalX()] = gpu.PackHalf2(a[i], a[i+1]) ^ gpu.PackBFloat162(b[i+8], b[i+9])
}

// Guarded: k is a multiple of 16 after the early return, so row*k + k0 +
// 2*tg is even in every iteration of the loop.
//
//kern:kernel block=128
func Guarded(t gpu.Thread, a []gpu.Half, out []uint32, k int) {
	if k%16 != 0 {
		return
	}
	row, tg := t.GlobalX()/4, t.Lane()%4
	var acc uint32
	for k0 := 0; k0 < k; k0 += 16 {
		ai := row*k + k0 + 2*tg
		acc ^= gpu.PackHalf2(a[ai], a[ai+1]) ^ gpu.PackHalf2(a[ai+8*k+8], a[ai+8*k+9])
	}
	out[t.GlobalX()] = acc
}

// Odd: i may be odd (k unknown), or the pair starts at an odd offset, or
// the slice is re-sliced at an odd start: two 16-bit loads each.
//
//kern:kernel block=128
func Odd(t gpu.Thread, a []gpu.Half, out []uint32, k int) {
	i := 2 * t.GlobalX()
	s := a[1:]
	out[t.GlobalX()] = gpu.PackHalf2(a[t.GlobalX()*k], a[t.GlobalX()*k+1]) ^ gpu.PackHalf2(a[i+1], a[i+2]) ^ gpu.PackHalf2(s[i], s[i+1])
}

// Swapped: hi before lo, or a store between the two loads: not merged.
//
//kern:kernel block=128
func Swapped(t gpu.Thread, a []gpu.Half, out []uint32) {
	i := 2 * t.GlobalX()
	out[t.GlobalX()] = gpu.PackHalf2(a[i+1], a[i])
}
