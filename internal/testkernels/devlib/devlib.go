//kern:library

// Package devlib is a kernel library for kern's own tests: device helpers
// that the kernels of another package call (compiler/library.go).
package devlib

import "github.com/gokern/kern/gpu"

// Saxpy returns a·x + y, rounded once.
func Saxpy(a, x, y float32) float32 { return gpu.FMA(a, x, y) }

// BlockMean returns the mean of v over the block's threads, to every
// thread (a block reduction: every thread must call it).
func BlockMean(t gpu.Thread, v float32) float32 {
	return gpu.BlockSum(t, v) / float32(t.BlockDim().X)
}

// Wrap returns i modulo n in [0, n) for any sign of i (n > 0).
func Wrap[T ~int | ~int32](i, n T) T {
	r := i % n
	if r < 0 {
		r += n
	}
	return r
}
