// Barriers and collectives under conditions the uniformity analysis
// proves uniform (block-wide or warp-wide): each compiles.
package uniform

import "github.com/gokern/kern/gpu"

func maybeReturn(t gpu.Thread, x []float32) {
	if t.ThreadIdx().X < 16 {
		return
	}
	if i := t.GlobalX(); i < len(x) {
		x[i] = 0
	}
}

// AfterHelperReturn: a helper's divergent early return ends in the
// helper; every thread is back for the barrier.
//
//kern:kernel block=64
func AfterHelperReturn(t gpu.Thread, x []float32) {
	maybeReturn(t, x)
	t.Sync()
}

// UnderVote shuffles under a vote's result, which every lane of the warp
// agrees on.
//
//kern:kernel block=64
func UnderVote(t gpu.Thread, x []float32) {
	i := t.GlobalX()
	if gpu.Any(t, i < len(x)) {
		var v float32
		if i < len(x) {
			v = x[i]
		}
		v = gpu.ShflXor(t, v, 1)
		if i < len(x) {
			x[i] = v
		}
	}
}

// UnderBlockSum syncs under a block reduction's result, the same in every
// thread.
//
//kern:kernel block=64
func UnderBlockSum(t gpu.Thread, x []float32) {
	var v float32
	if i := t.GlobalX(); i < len(x) {
		v = x[i]
	}
	if gpu.BlockSum(t, v) > 0 {
		t.Sync()
	}
}

// UnderParams syncs under conditions on parameters, lengths, shared
// memory at a uniform address and a local variable holding uniform values.
//
//kern:kernel block=64
func UnderParams(t gpu.Thread, x []float32, n int, flag bool) {
	s := gpu.Shared[int32](t, 1)
	if t.ThreadIdx().X == 0 {
		s[0] = int32(n)
	}
	t.Sync()
	var lim [2]int
	lim[0] = n
	lim[1] = len(x)
	if flag && n < 5 && len(x) > 0 && s[0] > 0 && lim[0] < lim[1] {
		t.Sync()
	}
}
