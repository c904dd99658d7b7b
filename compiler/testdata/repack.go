// A loaded word split into its 16-bit halves and packed back in order is
// the word (compiler/ir/repack.go): gpu.Load8 then PackHalf2 or
// PackBFloat162 of adjacent elements, as the decode GEMVs pack mma
// registers, and Load8 then Store8; the packs that are not the word stay
// packs. repack_test.go runs each kernel on the emulator.
package repack

import "github.com/gokern/kern/gpu"

// Pack: the four words of a Load8, packed back through an array as
// gemvdev's Pack does: no split is left.
//
//kern:kernel block=32 nobounds
func Pack(t gpu.Thread, a []gpu.BFloat16, out []uint32) {
	i := t.GlobalX()
	v := gpu.Load8(a, 8*i)
	w := [4]uint32{gpu.PackBFloat162(v[0], v[1]), gpu.PackBFloat162(v[2], v[3]), gpu.PackBFloat162(v[4], v[5]), gpu.PackBFloat162(v[6], v[7])}
	out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = w[0], w[1], w[2], w[3]
}

// Copy: Load8 into Store8 stores the loaded words.
//
//kern:kernel block=32 nobounds
func Copy(t gpu.Thread, a, b []gpu.Half) {
	i := 8 * t.GlobalX()
	gpu.Store8(b, i, gpu.Load8(a, i))
}

// Shuffled: halves swapped ({hi, lo}), taken from two words, and one half
// twice: each stays a split and a pack.
//
//kern:kernel block=32 nobounds
func Shuffled(t gpu.Thread, a []gpu.Half, out []uint32) {
	i := t.GlobalX()
	v := gpu.Load8(a, 8*i)
	out[3*i] = gpu.PackHalf2(v[1], v[0])
	out[3*i+1] = gpu.PackHalf2(v[3], v[4])
	out[3*i+2] = gpu.PackHalf2(v[6], v[6])
}

// Rewritten: the low half is taken from x, then x changes (a phi register
// of the unrolled loop written again), and the high half comes from the
// new x: the pack is not x.
//
//kern:kernel block=32 nobounds
func Rewritten(t gpu.Thread, a []uint32, out []uint32) {
	i := t.GlobalX()
	x := a[i]
	var lo, hi gpu.Half
	for range 2 {
		lo = gpu.Half(x)
		x = x*3 + 1
		hi = gpu.Half(x >> 16)
	}
	out[i] = gpu.PackHalf2(lo, hi) ^ x
}
