package gemvnorm

// v2's mma loop for one tile of x (ops/internal/gemvtc's has two); the
// W loads, codecs and epilogue are ops/internal/gemvdev's.

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/gemvdev"
)

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
