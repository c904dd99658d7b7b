package gemvnorm

// v2's loads and mma loop for one tile of x (ops/internal/gemvtc's has
// two); the codecs and the epilogue are ops/internal/gemvdev's.

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/gemvdev"
)

// tcLoadW loads the W chunks of the iteration at chunk c: rows g and
// g+8 of the block's 16, columns 8q..8q+7 of each chunk.
func tcLoadW[A gpu.Elem, CA gemvdev.In[A]](ca CA, w []A, wa, wb, c int32) (fa, fb [tcUnroll][4]uint32) {
	//kern:unroll
	for u := range tcUnroll {
		kc := (c + int32(u*tcWarps)) << 5
		fa[u] = ca.Pack(gpu.Load8(w, int(wa+kc)))
		fb[u] = ca.Pack(gpu.Load8(w, int(wb+kc)))
	}
	return fa, fb
}

// tcMMA adds an iteration's chunks to the accumulator: per chunk two
// k16 steps of one mma each (v2's k order, with its first tile of x only).
func tcMMA[A any, CA gemvdev.In[A]](ca CA, t gpu.Thread, acc [4]float32, fa, fb, f [tcUnroll][4]uint32) [4]float32 {
	//kern:unroll
	for u := range tcUnroll {
		//kern:unroll
		for h := range 2 {
			a := [4]uint32{fa[u][2*h], fb[u][2*h], fa[u][2*h+1], fb[u][2*h+1]}
			acc = ca.MMA(t, a, [2]uint32{f[u][2*h], f[u][2*h+1]}, acc)
		}
	}
	return acc
}
