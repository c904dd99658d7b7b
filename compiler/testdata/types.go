// Every scalar type as a parameter, slice element and in arithmetic: Go's
// wrapping of sub-word integers, arithmetic signed >>, over-wide shifts.
package types

import "github.com/gokern/kern/gpu"

//kern:kernel
func Scalars(t gpu.Thread, b bool, i8 int8, u8 uint8, i16 int16, u16 uint16, i32 int32, u32 uint32,
	i64 int64, u64 uint64, n int, u uint, f32 float32, f64 float64, out []float64) {
	if t.GlobalX() != 0 || len(out) < 2 {
		return
	}
	s := float64(i8) + float64(u8) + float64(i16) + float64(u16) + float64(i32) + float64(u32) +
		float64(i64) + float64(u64) + float64(n) + float64(u) + float64(f32) + f64
	if b {
		s = -s
	}
	out[0] = s
	out[1] = 1
}

//kern:kernel
func Slices(t gpu.Thread, bs []bool, i8 []int8, u8 []uint8, i16 []int16, u16 []uint16, i32 []int32,
	u32 []uint32, i64 []int64, u64 []uint64, f32 []float32, f64 []float64) {
	i := t.GlobalX()
	if i >= len(bs) || i >= len(i8) || i >= len(u8) || i >= len(i16) || i >= len(u16) || i >= len(i32) ||
		i >= len(u32) || i >= len(i64) || i >= len(u64) || i >= len(f32) || i >= len(f64) {
		return
	}
	bs[i] = !bs[i]
	i8[i]++
	u8[i]++
	i16[i]++
	u16[i]++
	i32[i]++
	u32[i]++
	i64[i]++
	u64[i]++
	f32[i]++
	f64[i]++
}

// Wrap8 checks 8- and 16-bit wrapping: 200+100 is 44 in uint8, 100+100 is
// -56 in int8, 127*3 is 125 in int8.
//
//kern:kernel
func Wrap8(t gpu.Thread, a []uint8, b []int8, c []uint16, d []int16, out []int32) {
	i := t.GlobalX()
	if i < len(a) && i < len(b) && i < len(c) && i < len(d) && i < len(out) {
		x := a[i] + 100
		y := b[i] * 3
		z := c[i] << 4
		w := d[i] - 30000
		nx := -b[i]
		cx := ^a[i]
		out[i] = int32(x) + int32(y) + int32(z) + int32(w) + int32(nx) + int32(cx)
	}
}

// Shifts: signed >> is arithmetic; shifts by the width or more give 0 (or
// the sign for signed >>), as in Go.
//
//kern:kernel
func Shifts(t gpu.Thread, x []int32, ux []uint64, s []uint, s8 []uint8, s32 []int32, out []int64) {
	i := t.GlobalX()
	if i < len(x) && i < len(ux) && i < len(s) && i < len(s8) && i < len(s32) && i < len(out) {
		a := int64(x[i]>>s[i]) + int64(x[i]<<s[i])
		b := int64(ux[i]>>s8[i]) + int64(ux[i]<<s8[i])
		c := int64(x[i]>>40) + int64(x[i]<<33) + int64(ux[i]>>64)
		d := int64(x[i] >> s32[i])
		out[i] = a + b + c + d
	}
}

// Conversions between every pair of widths and float.
//
//kern:kernel
func Convert(t gpu.Thread, f []float32, d []float64, i []int64, out8 []int8, outu16 []uint16, outf []float32, outu []uint64) {
	k := t.GlobalX()
	if k < len(f) && k < len(d) && k < len(i) && k < len(out8) && k < len(outu16) && k < len(outf) && k < len(outu) {
		out8[k] = int8(f[k]) + int8(i[k])
		outu16[k] = uint16(d[k]) + uint16(i[k])
		outf[k] = float32(d[k]) + float32(i[k]) + float32(uint32(i[k]))
		outu[k] = uint64(f[k]) + uint64(int32(i[k])) + uint64(uint8(i[k]))
		d[k] = float64(f[k]) + float64(int16(i[k]))
	}
}

//kern:kernel
func Bools(t gpu.Thread, a, b []bool, out []bool) {
	i := t.GlobalX()
	if i < len(a) && i < len(b) && i < len(out) {
		x, y := a[i], b[i]
		out[i] = x && !y || x == y || x != !y
	}
}

// Shift8 shifts 8-bit values: the shift is done on the 32-bit register
// (shl.b32, not shl.u32) and the result renormalised.
//
//kern:kernel
func Shift8(t gpu.Thread, a []uint8, b []int8, s []uint8) {
	i := t.GlobalX()
	if i < len(a) && i < len(b) && i < len(s) {
		a[i] = a[i]<<s[i] | a[i]>>1
		b[i] = b[i]<<3 ^ b[i]>>s[i]
	}
}
