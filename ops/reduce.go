package ops

// Warp and block reductions used by the row kernels.
//
// blockSum is gpu.BlockSum written out: the warps' sums go through 32
// words of shared memory and the first warp... every warp re-reduces
// them, so every thread gets the result without a third barrier. It
// exists because gpu.BlockSum's PTX compares with setp.lo.u32, which the
// emulator does not decode yet (see the package's kern bug notes);
// when it does, the helpers can become gpu.BlockSum and gpu.BlockMax.
//
// The helpers take and return the value through their parameter rather
// than a local: the compiler rejects a local whose type is a type
// parameter.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// blockSum returns the sum of v over the block to every thread. The
// block must be a whole number of warps, at most 1024 threads; every
// thread must call it under block-uniform control flow. The order of the
// additions is fixed by the block shape, so a result is reproducible.
func blockSum[T gpu.Number](t gpu.Thread, v T) T {
	s := gpu.Shared[T](t, 32)
	v = gpu.WarpSum(t, v)
	if t.Lane() == 0 {
		s[t.Warp()] = v
	}
	t.Sync()
	v = 0
	if t.Lane() < t.BlockDim().X/32 {
		v = s[t.Lane()]
	}
	v = gpu.WarpSum(t, v)
	t.Sync() // s is reused by the next call
	return v
}

// blockMax returns the maximum of v over the block to every thread, with
// blockSum's requirements. NaN inputs are ignored unless all are NaN.
func blockMax(t gpu.Thread, v float32) float32 {
	s := gpu.Shared[float32](t, 32)
	v = warpMax(t, v)
	if t.Lane() == 0 {
		s[t.Warp()] = v
	}
	t.Sync()
	v = negInf()
	if t.Lane() < t.BlockDim().X/32 {
		v = s[t.Lane()]
	}
	v = warpMax(t, v)
	t.Sync()
	return v
}

// warpMax is gpu.WarpMax with gpu.Max, which ignores NaN on the device
// and in native mode alike (the builtin max propagates it natively).
func warpMax(t gpu.Thread, v float32) float32 {
	for m := 16; m > 0; m /= 2 {
		v = gpu.Max(v, gpu.ShflXor(t, v, m))
	}
	return v
}

// negInf is float32 -Inf.
func negInf() float32 { return math.Float32frombits(0xff800000) }
