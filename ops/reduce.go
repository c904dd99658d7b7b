package ops

// Block and warp reductions the kernels share beyond gpu.BlockSum and
// gpu.BlockMax: the (value, index) arg-max reduction of Argmax and
// Sample, and the float32 -Inf they start from.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// blockArgMax returns the best (value, index) pair of the block to every
// thread. As gpu.BlockSum, every thread of the block (a whole number of
// warps, at most 1024) must call it under block-uniform control flow.
func blockArgMax(t gpu.Thread, v float32, k int32) (float32, int32) {
	sv := gpu.Shared[float32](t, 32)
	sk := gpu.Shared[int32](t, 32)
	v, k = warpArgMax(t, v, k)
	if t.Lane() == 0 {
		sv[t.Warp()], sk[t.Warp()] = v, k
	}
	t.SyncWarp() // reconverge lane 0 before the aligned barrier (see warpArgMax)
	t.Sync()
	v, k = negInf(), int32(math.MaxInt32)
	if t.Lane() < t.BlockDim().X/32 {
		v, k = sv[t.Lane()], sk[t.Lane()]
	}
	v, k = warpArgMax(t, v, k)
	t.Sync()
	return v, k
}

// warpArgMax is a butterfly over the warp on (value, index) pairs.
func warpArgMax(t gpu.Thread, v float32, k int32) (float32, int32) {
	for m := 16; m > 0; m /= 2 {
		w, j := gpu.ShflXor(t, v, m), gpu.ShflXor(t, k, m)
		if argBetter(w, j, v, k) {
			v, k = w, j
		}
	}
	// The data-dependent if splits the warp; lanes rejoin where their PCs
	// meet, which the emulator's synccheck finds is after a following
	// bar.sync when the taken side loops back first. Reconverge explicitly,
	// as CUDA code does with __syncwarp().
	t.SyncWarp()
	return v, k
}

// negInf is float32 -Inf.
func negInf() float32 { return math.Float32frombits(0xff800000) }
