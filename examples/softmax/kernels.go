package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// Softmax computes, for each row of x (rows×cols, row-major),
//
//	out[r][j] = exp(x[r][j] - m) / Σ_k exp(x[r][k] - m),  m = max_k x[r][k]
//
// One block per row, three passes over the row held in global memory (the
// second and third hit the cache):
//
//  1. each thread takes the max over its strided columns; gpu.BlockMax
//     gives the row's max to every thread. Subtracting it makes every
//     exponent ≤ 0, so exp cannot overflow however large x is;
//  2. each thread sums exp(x - m) over its columns; gpu.BlockSum gives the
//     denominator, which is at least 1 (the max term is exp(0));
//  3. each thread writes its columns, multiplied by 1/denominator.
//
//kern:kernel block=256 idx32
func Softmax(t gpu.Thread, x, out []float32, cols int) {
	r := t.BlockIdx().X
	row := x[r*cols : (r+1)*cols]
	dst := out[r*cols : (r+1)*cols]
	tid, step := t.ThreadIdx().X, t.BlockDim().X

	m := float32(-3.4028234663852886e38) // -MaxFloat32: below every finite x
	for j := tid; j < cols; j += step {
		m = max(m, row[j])
	}
	m = gpu.BlockMax(t, m)

	sum := float32(0)
	for j := tid; j < cols; j += step {
		sum += gpu.Exp(row[j] - m)
	}
	inv := 1 / gpu.BlockSum(t, sum)

	for j := tid; j < cols; j += step {
		dst[j] = gpu.Exp(row[j]-m) * inv
	}
}
