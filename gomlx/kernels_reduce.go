package gomlx

// Row sums, v2: one block of 256 threads per row, each thread striding
// the row and the partial sums meeting in gpu.BlockSum. v1 (reduce in
// kernels_float.go) gives each row one thread, which leaves a GPU idle
// when a few long rows are reduced (ReduceAllSum of a loss, the batch
// sum of a bias gradient). ops_reduce.go picks v2 for sums over rows of
// at least blockRowMin elements; max, min and product stay on v1 (v1
// keeps NaN propagation and there is no block product).

import "github.com/gokern/kern/gpu"

// blockRowMin is the row length from which sums use one block per row.
const blockRowMin = 256

func sumRowBlock[T any, C codec[T]](c C, t gpu.Thread, out, x []T, cols int) {
	r := t.BlockIdx().X
	var acc float32
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		acc += c.load(x[r*cols+j])
	}
	acc = gpu.BlockSum(t, acc)
	if t.ThreadIdx().X == 0 {
		out[r] = c.store(acc)
	}
}

//kern:kernel block=256
func sumRowBlockF32(t gpu.Thread, out, x []float32, cols int) { sumRowBlock(f32c{}, t, out, x, cols) }

//kern:kernel block=256
func sumRowBlockF16(t gpu.Thread, out, x []gpu.Half, cols int) { sumRowBlock(f16c{}, t, out, x, cols) }

//kern:kernel block=256
func sumRowBlockBF16(t gpu.Thread, out, x []gpu.BFloat16, cols int) {
	sumRowBlock(bf16c{}, t, out, x, cols)
}

//kern:kernel block=256
func sumRowBlockF64(t gpu.Thread, out, x []float64, cols int) {
	r := t.BlockIdx().X
	var acc float64
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		acc += x[r*cols+j]
	}
	acc = gpu.BlockSum(t, acc)
	if t.ThreadIdx().X == 0 {
		out[r] = acc
	}
}
