// Atomics on global and shared memory, every type, and a CAS loop.
package atomics

import (
	"math"

	"github.com/gokern/kern/gpu"
)

//kern:kernel
func Adds(t gpu.Thread, i32 []int32, u32 []uint32, u64 []uint64, f32 []float32, f64 []float64, n []int, old []int32) {
	if len(i32) == 0 || len(u32) == 0 || len(u64) == 0 || len(f32) == 0 || len(f64) == 0 || len(n) == 0 {
		return
	}
	o := gpu.AtomicAdd(&i32[0], 1)
	gpu.AtomicAdd(&u32[0], 2)
	gpu.AtomicAdd(&u64[0], 3)
	gpu.AtomicAdd(&f32[0], 0.5)
	gpu.AtomicAdd(&f64[0], 0.25)
	gpu.AtomicAdd(&n[0], -1)
	if i := t.GlobalX(); i < len(old) {
		old[i] = o
	}
}

//kern:kernel
func MaxMin(t gpu.Thread, x []int32, u []uint64, hi, lo []int32, uhi []uint64) {
	i := t.GlobalX()
	if i < len(x) && i < len(u) && len(hi) > 0 && len(lo) > 0 && len(uhi) > 0 {
		gpu.AtomicMax(&hi[0], x[i])
		gpu.AtomicMin(&lo[0], x[i])
		gpu.AtomicMax(&uhi[0], u[i])
	}
}

// CASLoop implements a float32 atomic multiply with compare-and-swap.
//
//kern:kernel
func CASLoop(t gpu.Thread, prod []uint32, x []float32) {
	i := t.GlobalX()
	if i >= len(x) || len(prod) == 0 {
		return
	}
	for {
		old := prod[0]
		nv := math.Float32bits(math.Float32frombits(old) * x[i])
		if gpu.AtomicCAS(&prod[0], old, nv) == old {
			break
		}
	}
}

// Histogram counts into a shared histogram, then adds it to the global
// one; AtomicExch resets a flag.
//
//kern:kernel block=256
func Histogram(t gpu.Thread, x []uint8, hist []uint32, flag []int32) {
	h := gpu.Shared[uint32](t, 256)
	tid := t.ThreadIdx().X
	h[tid] = 0
	t.Sync()
	if i := t.GlobalX(); i < len(x) {
		gpu.AtomicAdd(&h[x[i]], 1)
	}
	t.Sync()
	if tid < len(hist) {
		gpu.AtomicAdd(&hist[tid], h[tid])
	}
	last := gpu.AtomicExch(&h[tid], 0)
	if tid == 0 && len(flag) > 0 {
		gpu.AtomicExch(&flag[0], int32(last))
	}
}

//kern:kernel
func SharedCAS(t gpu.Thread, out []uint64) {
	s := gpu.Shared[uint64](t, 1)
	if t.ThreadIdx().X == 0 {
		s[0] = 0
	}
	t.Sync()
	gpu.AtomicCAS(&s[0], 0, uint64(t.ThreadIdx().X)+1)
	f := gpu.Shared[float64](t, 1)
	gpu.AtomicExch(&f[0], 1.5)
	t.Sync()
	if i := t.GlobalX(); i < len(out) {
		out[i] = s[0] + uint64(f[0])
	}
}
