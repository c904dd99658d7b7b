// //kern:unroll on constant-trip loops: the counter becomes a constant in
// each copy, so the arrays it indexes stay in registers.
package unroll

import "github.com/gokern/kern/gpu"

//kern:kernel
func Dot8(t gpu.Thread, x, y []float32, out []float32) {
	i := t.GlobalX()
	if 8*i+7 >= len(x) || 8*i+7 >= len(y) || i >= len(out) || i < 0 {
		return
	}
	var acc [8]float32
	//kern:unroll
	for k := 0; k < 8; k++ {
		acc[k] = x[8*i+k] * y[8*i+k]
	}
	var s float32
	//kern:unroll
	for k := range 8 {
		s += acc[k]
	}
	out[i] = s
}

// NotUnrolled is the same reduction without the directive: acc is indexed
// by a variable, so it lives in .local memory.
//
//kern:kernel
func NotUnrolled(t gpu.Thread, x []float32, out []float32) {
	i := t.GlobalX()
	if 8*i+7 >= len(x) || i >= len(out) || i < 0 {
		return
	}
	var acc [8]float32
	for k := 0; k < 8; k++ {
		acc[k] = x[8*i+k]
	}
	var s float32
	for k := range 8 {
		s += acc[k]
	}
	out[i] = s
}

//kern:kernel
func Nested(t gpu.Thread, out []float32) {
	var m [4][4]float32
	//kern:unroll
	for r := 0; r < 4; r++ {
		//kern:unroll
		for c := 0; c <= 3; c++ {
			m[r][c] = float32(r*4 + c)
		}
	}
	if i := t.GlobalX(); i < len(out) {
		out[i] = m[1][2] + m[3][3]
	}
}

// NestedRange unrolls nested range-over-int loops (whose SSA blocks carry
// no positions, so the inner statement must not claim the outer loop).
//
//kern:kernel
func NestedRange(t gpu.Thread, out []float32) {
	var m [4][4]float32
	//kern:unroll
	for r := range 4 {
		//kern:unroll
		for c := range 4 {
			m[r][c] = float32(r*4 + c)
		}
	}
	if i := t.GlobalX(); i < len(out) {
		out[i] = m[1][2] + m[3][3]
	}
}

// PastEnd runs an unrolled counter past an array: as in Go, the access
// fails when it runs (the check is unconditional), not at compile time.
//
//kern:kernel
func PastEnd(t gpu.Thread, out []float32, n int) {
	var a [4]float32
	//kern:unroll
	for k := range 6 {
		if k < n {
			a[k] = 1
		}
	}
	if i := t.GlobalX(); i < len(out) {
		out[i] = a[0] + a[3]
	}
}
