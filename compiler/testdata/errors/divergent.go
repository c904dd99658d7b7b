// Barriers and collectives reached under thread-dependent control flow.
package divergent

import "github.com/gokern/kern/gpu"

//kern:kernel
func SyncUnderThreadIdx(t gpu.Thread, out []float32) {
	if t.ThreadIdx().X < 16 {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\) is reached under a condition`
	}
}

//kern:kernel
func SyncAfterEarlyReturn(t gpu.Thread, out []float32) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	out[i] = 1
}

//kern:kernel
func SyncInDivergentLoop(t gpu.Thread, out []float32) {
	for k := 0; k < t.ThreadIdx().X; k++ {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
}

//kern:kernel
func SyncUnderLoadedValue(t gpu.Thread, flags []int32) {
	if flags[t.GlobalX()] != 0 {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
}

//kern:kernel
func ShuffleUnderLane(t gpu.Thread, out []float32) {
	v := float32(t.Lane())
	if t.Lane() < 16 {
		v = gpu.ShflXor(t, v, 1) // ERROR DivergentBarrier "gpu.ShflXor is a warp collective"
	}
	out[t.GlobalX()] = v
}

//kern:kernel
func WarpOpsUnderLane(t gpu.Thread, out []float32) {
	if t.Lane() == 0 {
		out[0] = gpu.WarpSum(t, out[0]) // ERROR DivergentBarrier "gpu.WarpSum is a warp collective"
		gpu.Ballot(t, true)             // ERROR DivergentBarrier "gpu.Ballot is a warp collective"
		t.SyncWarp()                    // ERROR DivergentBarrier `t.SyncWarp\(\) is a warp collective`
	}
}

//kern:kernel
func BlockSumDivergent(t gpu.Thread, out []float32) {
	if t.GlobalX() < len(out) {
		out[0] = gpu.BlockSum(t, out[t.GlobalX()]) // ERROR DivergentBarrier "gpu.BlockSum is reached under a condition"
	}
}

// BlockSumUnderWarp: a warp-uniform condition is not enough for a block
// barrier.
//
//kern:kernel
func BlockSumUnderWarp(t gpu.Thread, out []float32) {
	if t.Warp() == 0 {
		out[0] = gpu.BlockSum(t, float32(1)) // ERROR DivergentBarrier `gpu.BlockSum is reached under a condition that differs between the block's threads \(warp-uniform`
	}
}

func barrier(t gpu.Thread) {
	t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
}

//kern:kernel
func HelperSyncDivergent(t gpu.Thread, out []float32) {
	if t.ThreadIdx().X == 0 {
		barrier(t)
	}
}

// ShuffleAfterShuffle: a branch on a shuffled value diverges.
//
//kern:kernel
func BranchOnShuffle(t gpu.Thread, out []int32) {
	v := gpu.ShflIdx(t, int32(t.Lane()), 0)
	if v > 0 {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
}

// NestedUniformIf: a uniform condition nested in a divergent one is still
// divergent.
//
//kern:kernel
func NestedUniformIf(t gpu.Thread, n int) {
	if t.ThreadIdx().X < 16 {
		if n > 0 {
			t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
		}
	}
}

// BreakThenSync: after a thread-dependent break, later iterations run in
// only some threads.
//
//kern:kernel
func BreakThenSync(t gpu.Thread, x []float32) {
	for k := 0; k < 8; k++ {
		if x[t.GlobalX()] > float32(k) {
			break
		}
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
}

// CounterAfterBreak: the counter of a loop left by a thread-dependent
// break differs between threads after the loop.
//
//kern:kernel
func CounterAfterBreak(t gpu.Thread, x []float32) {
	k := 0
	for ; k < 8; k++ {
		if x[t.GlobalX()] > float32(k) {
			break
		}
	}
	if k > 3 {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
}

func tidOf(t gpu.Thread) int { return t.ThreadIdx().X }

func tidGeneric[T int | int32](t gpu.Thread, x T) T { return x + T(t.ThreadIdx().X) }

//kern:kernel
func MoreDivergence(t gpu.Thread, n int, c []int32, x []float32) {
	switch t.ThreadIdx().X {
	case 0:
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
	for i := t.ThreadIdx().X; i < n; i += t.BlockDim().X {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
	for k := 0; k < n; k++ {
		if t.ThreadIdx().X == k {
			continue
		}
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
	if gpu.AtomicAdd(&c[0], 1) == 0 {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
	if tidOf(t) == 0 {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
	if tidGeneric(t, int32(1)) == 0 {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
	// Warp-uniform is not block-uniform.
	if gpu.Any(t, t.ThreadIdx().X == 0) {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
	v := x[0]
	if t.Lane() == 0 {
		v = 1
	}
	if v > 0 {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
}

// LocalMemory: a thread's own variables hold what that thread stored.
//
//kern:kernel
func LocalMemory(t gpu.Thread) {
	var arr [4]int
	arr[t.Lane()&3] = 1
	if arr[0] > 0 {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
	var a [2]int
	a[0] = t.Lane()
	if a[0] > 0 {
		t.Sync() // ERROR DivergentBarrier `t.Sync\(\)`
	}
}

//kern:kernel
func GridSyncUnderThreadIdx(t gpu.Thread, out []float32) {
	if t.GlobalX() < len(out) {
		gpu.GridSync(t) // ERROR DivergentBarrier `gpu.GridSync is reached under a condition`
	}
}

//kern:kernel
func GridSyncUnderBlockIdx(t gpu.Thread, out []float32) {
	if t.BlockIdx().X == 0 {
		gpu.GridSync(t) // uniform within the block: accepted here (every block must still reach it: docs/language.md)
	}
}
