// Integer and floating-point arithmetic, comparisons and unary operators.
package arith

import "github.com/gokern/kern/gpu"

//kern:kernel block=256
func IntOps(t gpu.Thread, a, b, out []int) {
	i := t.GlobalX()
	if i < len(out) && i < len(a) && i < len(b) {
		x, y := a[i], b[i]
		d := y | 1
		out[i] = (x+y)*(x-y) + x/d + x%d - -x + x&^y ^ ^y
	}
}

// SignedPow2 divides a possibly negative int by powers of two: a biased
// shift and a mask, no div.s64/rem.s64 (PTX's are subroutine calls).
//
//kern:kernel
func SignedPow2(t gpu.Thread, a, out []int) {
	i := t.GlobalX()
	if i < len(out) && i < len(a) {
		x := a[i]
		out[i] = x/8 + x%16 + int(int32(x)/4)
	}
}

//kern:kernel
func UintOps(t gpu.Thread, a []uint32, out []uint32) {
	i := t.GlobalX()
	if i < len(out) && i < len(a) {
		x := a[i]
		out[i] = x/7 + x%5 + x*3 - x>>2 + x<<3 | x&0xff
	}
}

//kern:kernel
func Float32Ops(t gpu.Thread, a, b, out []float32) {
	i := t.GlobalX()
	if i < len(out) && i < len(a) && i < len(b) {
		x, y := a[i], b[i]
		out[i] = (x+y)*(x-y)/y - -x + x*2.5
	}
}

//kern:kernel
func Float64Ops(t gpu.Thread, a, b, out []float64) {
	i := t.GlobalX()
	if i < len(out) && i < len(a) && i < len(b) {
		x, y := a[i], b[i]
		out[i] = (x+y)*(x-y)/y - -x + x*2.5
	}
}

//kern:kernel
func Compare(t gpu.Thread, a, b []float32, ia, ib []int32, out []int32) {
	i := t.GlobalX()
	if i >= len(out) || i >= len(a) || i >= len(b) || i >= len(ia) || i >= len(ib) {
		return
	}
	var r int32
	if a[i] == b[i] {
		r |= 1
	}
	if a[i] != b[i] {
		r |= 2
	}
	if a[i] < b[i] {
		r |= 4
	}
	if a[i] >= b[i] {
		r |= 8
	}
	if ia[i] <= ib[i] {
		r |= 16
	}
	if ia[i] > ib[i] {
		r |= 32
	}
	out[i] = r
}

//kern:kernel
func MinMax(t gpu.Thread, a, b []float32, ia, ib []int, out []float32, iout []int) {
	i := t.GlobalX()
	if i < len(out) && i < len(a) && i < len(b) && i < len(ia) && i < len(ib) && i < len(iout) {
		out[i] = min(a[i], b[i]) + max(a[i], b[i], 1)
		iout[i] = min(ia[i], ib[i]) + max(ia[i], ib[i])
	}
}

//kern:kernel
func CompoundAssign(t gpu.Thread, out []int64) {
	i := t.GlobalX()
	if i < len(out) {
		v := out[i]
		v += 3
		v *= 5
		v -= 1
		v <<= 2
		v >>= 1
		v %= 1000
		v /= 3
		v++
		out[i] = v
	}
}
