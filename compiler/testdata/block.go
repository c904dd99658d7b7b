// Block barriers and block-wide reductions.
package block

import "github.com/gokern/kern/gpu"

//kern:kernel block=256
func Reduce(t gpu.Thread, x []float32, sums []float32, maxs []int32, mins []float64) {
	i := t.GlobalX()
	var v float32
	if i < len(x) {
		v = x[i]
	}
	s := gpu.BlockSum(t, v)
	m := gpu.BlockMax(t, int32(i))
	lo := gpu.BlockMin(t, float64(v))
	if t.ThreadIdx().X == 0 {
		b := t.BlockIdx().X
		if b < len(sums) && b < len(maxs) && b < len(mins) {
			sums[b], maxs[b], mins[b] = s, m, lo
		}
	}
}

// UniformSync reaches barriers under conditions every thread of the block
// agrees on: a block index and a scalar parameter.
//
//kern:kernel block=128
func UniformSync(t gpu.Thread, x []float32, n int) {
	s := gpu.Shared[float32](t, 128)
	tid := t.ThreadIdx().X
	if t.BlockIdx().X == 0 {
		s[tid] = 1
		t.Sync()
	}
	for k := 0; k < n; k++ {
		s[tid] += 1
		t.Sync()
	}
	if i := t.GlobalX(); i < len(x) {
		x[i] = s[(tid+1)%128]
	}
}

// SyncInHelper calls a helper that contains a barrier under uniform
// control flow.
//
//kern:kernel block=64
func SyncInHelper(t gpu.Thread, x []int32) {
	s := gpu.Shared[int32](t, 64)
	tid := t.ThreadIdx().X
	s[tid] = int32(tid)
	barrier(t)
	if i := t.GlobalX(); i < len(x) {
		x[i] = s[63-tid]
	}
}

func barrier(t gpu.Thread) { t.Sync() }

// LoopWithGuards reaches barriers in uniform loops whose bodies hold
// thread-dependent branches: the branches rejoin before the barriers, and
// a loop whose guarded store ends the body has two back edges carrying the
// same counter.
//
//kern:kernel block=128
func LoopWithGuards(t gpu.Thread, x []float32, out []float32, n int) {
	i := t.GlobalX()
	for k := range x {
		t.Sync()
		if i == k {
			out[0] = x[k]
		}
	}
	for k := 0; k < n; k++ {
		s := gpu.BlockSum(t, float32(k))
		if i < len(out) {
			out[i] += s
		}
	}
}
