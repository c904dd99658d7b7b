// Helper funcs: plain, generic, multi-result, returning a slice or a
// struct, nested, and called from several kernels.
package helpers

import "github.com/gokern/kern/gpu"

func axpy(a, x, y float32) float32 { return a*x + y }

func clamp[T int | int32 | float32 | float64](v, lo, hi T) T {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

func divmod(a, b int) (int, int) { return a / b, a % b }

// row returns row r of an n-column matrix stored row-major.
func row(m []float32, r, n int) []float32 { return m[r*n : r*n+n] }

type pair struct {
	lo, hi float32
}

func span(x []float32) pair {
	p := pair{x[0], x[0]}
	for _, v := range x {
		p.lo = min(p.lo, v)
		p.hi = max(p.hi, v)
	}
	return p
}

func sumTo(n int) int {
	s := 0
	for i := range n {
		s += double(i)
	}
	return s
}

func double(i int) int { return i * 2 }

//kern:kernel
func Helpers(t gpu.Thread, a float32, x, y []float32) {
	i := t.GlobalX()
	if i < len(y) && i < len(x) {
		y[i] = clamp(axpy(a, x[i], y[i]), -1, 1)
	}
}

//kern:kernel
func Generic(t gpu.Thread, f []float64, n []int32) {
	i := t.GlobalX()
	if i < len(f) && i < len(n) {
		f[i] = clamp(f[i], 0, 1)
		n[i] = clamp(n[i], 0, 255)
	}
}

//kern:kernel
func MultiResult(t gpu.Thread, q, r []int) {
	i := t.GlobalX()
	if i < len(q) && i < len(r) {
		q[i], r[i] = divmod(i+100, 7)
	}
}

// RowSums sums each row through a helper that returns a sub-slice.
//
//kern:kernel
func RowSums(t gpu.Thread, m []float32, cols int, sums []float32) {
	r := t.GlobalX()
	if r < len(sums) {
		var s float32
		for _, v := range row(m, r, cols) {
			s += v
		}
		sums[r] = s
	}
}

//kern:kernel
func StructResult(t gpu.Thread, x, lo, hi []float32) {
	if t.GlobalX() == 0 && len(x) > 0 && len(lo) > 0 && len(hi) > 0 {
		p := span(x)
		lo[0], hi[0] = p.lo, p.hi
	}
}

//kern:kernel
func Nested(t gpu.Thread, out []int) {
	i := t.GlobalX()
	if i < len(out) {
		out[i] = sumTo(i % 8)
	}
}
