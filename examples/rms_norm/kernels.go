package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// RMSNorm normalises each row of x (rows×cols, row-major) by its root mean
// square and scales it by w (cols):
//
//	out[r][j] = x[r][j] / sqrt(mean_j(x[r][j]²) + eps) · w[j]
//
// One block per row. The block's threads stride over the row (thread k
// takes columns k, k+256, k+512, ...), so a row may be any length and
// each warp's loads are 32 consecutive floats; gpu.BlockSum then adds the
// 256 partial sums of squares (a warp shuffle tree, then one across warps)
// and gives the total to every thread, which normalises its columns.
//
//kern:kernel block=256 idx32
func RMSNorm(t gpu.Thread, x, w, out []float32, cols int, eps float32) {
	r := t.BlockIdx().X
	row := x[r*cols : (r+1)*cols]
	dst := out[r*cols : (r+1)*cols]
	tid, step := t.ThreadIdx().X, t.BlockDim().X

	ss := float32(0)
	for j := tid; j < cols; j += step {
		ss += row[j] * row[j]
	}
	// Every thread reaches BlockSum: the loop above is divergent, but the
	// reduction sits after it, under block-uniform control flow.
	ss = gpu.BlockSum(t, ss)
	scale := gpu.Rsqrt(ss/float32(cols) + eps)

	for j := tid; j < cols; j += step {
		dst[j] = row[j] * scale * w[j]
	}
}
