// Bounds checks: the idioms that eliminate them, those that keep them,
// and nobounds.
package bounds

import "github.com/gokern/kern/gpu"

// Guarded: i < len(out) dominates out[i].
//
//kern:kernel
func Guarded(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	if i < len(out) && i < len(x) {
		out[i] = x[i] + 1
	}
}

// EarlyReturn: i >= len(out) returns first.
//
//kern:kernel
func EarlyReturn(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	if i >= len(out) || len(x) <= i {
		return
	}
	out[i] = x[i] + 1
}

// RangeLoop: for j := range x indexes x in range.
//
//kern:kernel
func RangeLoop(t gpu.Thread, x, out []float32) {
	var s float32
	for j := range x {
		s += x[j]
	}
	for j := range out {
		out[j] = s
	}
}

// Unguarded keeps every check: nothing proves i, i+1 or k in range.
//
//kern:kernel
func Unguarded(t gpu.Thread, x, out []float32, k int) {
	i := t.GlobalX()
	out[i] = x[i+1] + x[k]
}

// WrongSlice keeps the check on out: the guard is on x.
//
//kern:kernel
func WrongSlice(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	if i < len(x) {
		out[i] = x[i]
	}
}

// Signed keeps its check: a negative i passes i < len(x).
//
//kern:kernel
func Signed(t gpu.Thread, x []float32, i int) {
	if i < len(x) {
		x[i] = 0
	}
}

// NoBounds has no device checks at all.
//
//kern:kernel nobounds
func NoBounds(t gpu.Thread, x, out []float32, k int) {
	i := t.GlobalX()
	out[i] = x[i+1] + x[k]
	s := out[1:k]
	s[0] = 1
}

// Panic reports through the error slot even without bounds checks.
//
//kern:kernel nobounds
func Panic(t gpu.Thread, x []float32) {
	if len(x) == 0 {
		panic("empty input")
	}
	x[0] = 1
}

// Reslice checks the slice bounds and the index.
//
//kern:kernel
func Reslice(t gpu.Thread, x []float32, lo, hi int) {
	s := x[lo:hi]
	s[0] = 1
	u := x[:hi]
	u[len(u)-1] = 2
	v := x[lo:]
	v[1] = 3
}
