package gomlx

// Integer DotGeneral and ArgMinMax: the bodies of kernels_float.go's
// matmul and argRows over an icodec (kernels_int.go), accumulating in
// int64 (wrapping as Go's int64 does; the result is narrowed to the
// dtype, as XLA's integer dot is).

import "github.com/gokern/kern/gpu"

func matmulI[T any, C icodec[T]](c C, t gpu.Thread, out, a, b []T, m, k, n int) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	bi, r, col := i/(m*n), (i/n)%m, i%n
	var acc int64
	for p := 0; p < k; p++ {
		acc += c.load(a[(bi*m+r)*k+p]) * c.load(b[(bi*k+p)*n+col])
	}
	out[i] = c.store(acc)
}

//kern:kernel block=256
func matmulI32(t gpu.Thread, out, a, b []int32, m, k, n int) { matmulI(i32c{}, t, out, a, b, m, k, n) }

//kern:kernel block=256
func matmulI64(t gpu.Thread, out, a, b []int64, m, k, n int) { matmulI(i64c{}, t, out, a, b, m, k, n) }

func argRowsI[T any, C icodec[T]](c C, t gpu.Thread, out []int32, x []T, cols, isMin int) {
	r := t.GlobalX()
	if r >= len(out) {
		return
	}
	best := c.load(x[r*cols])
	k := 0
	for j := 1; j < cols; j++ {
		v := c.load(x[r*cols+j])
		if (isMin == 0 && v > best) || (isMin != 0 && v < best) {
			best, k = v, j
		}
	}
	out[r] = int32(k)
}

//kern:kernel block=256
func argRowsI32(t gpu.Thread, out []int32, x []int32, cols, isMin int) {
	argRowsI(i32c{}, t, out, x, cols, isMin)
}

//kern:kernel block=256
func argRowsI64(t gpu.Thread, out []int32, x []int64, cols, isMin int) {
	argRowsI(i64c{}, t, out, x, cols, isMin)
}
