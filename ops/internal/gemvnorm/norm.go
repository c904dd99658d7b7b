package gemvnorm

// The RMSNorm of rows of x, rounded to the GEMV's input type: the fused
// GEMV's prologue (into shared memory) and, alone, ops.Matmul's fallback
// where the norm is not fused (normCast, into global memory). One routine
// for both, so the two give the same bits.
//
// Sum order (the bit-identity the package doc promises): a block of
// Threads threads; thread j adds x[j]², x[j+256]², … in that order with
// FMAs (a chunk's elements past K add FMA(0, 0, s) = s exactly); the 32
// lanes of a warp meet in WarpSum's xor butterfly; the 8 warps' sums meet
// as gpu.BlockSum's second butterfly does, ((w0+w4)+(w2+w6)) +
// ((w1+w5)+(w3+w7)) (compiler/lower_warp.go, gpu/native_barrier.go).

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/gemvdev"
)

//kern:kernel block=256 nobounds pdl
func normCastF16(t gpu.Thread, out []gpu.Half, x, g []float32, k int, eps float32) {
	prefetchWeight(t, g, k)
	gpu.WaitPriorGrids(t)
	normRows(gemvdev.TCHalf{}, t, gpu.DynShared[float32](t), out, x, g, t.BlockIdx().X, 1, k, k, t.BlockIdx().X*k, eps)
}

//kern:kernel block=256 nobounds pdl
func normCastBF16(t gpu.Thread, out []gpu.BFloat16, x, g []float32, k int, eps float32) {
	prefetchWeight(t, g, k)
	gpu.WaitPriorGrids(t)
	normRows(gemvdev.TCBFloat16{}, t, gpu.DynShared[float32](t), out, x, g, t.BlockIdx().X, 1, k, k, t.BlockIdx().X*k, eps)
}

// NormCast are the fallback kernels, indexed [f16, bf16]: one block of
// Threads per row, NormCastShared bytes of dynamic shared memory.
var NormCast = [2]*kern.Kernel{normCastF16Kernel.Kernel(), normCastBF16Kernel.Kernel()}

// NormCastShared is normCast's dynamic shared memory: one row's 8 warp sums.
const NormCastShared = tcWarps * 4

// normRows writes rows r0 … r0+rb-1 of x [·, k] normalised, times g and
// rounded to A, to dst[d0 + i·stride + j] (row i, column j). part is
// shared memory for rb·8 warp sums. Every thread of the block calls it
// (rb, k uniform); it ends with dst written by this thread only: the
// caller synchronises before reading another thread's elements.
//
// A chunk's elements are reached through a slice at the thread's first
// one, so that each load and store is that one address plus a constant
// (one instruction), and checked against what is left of the row in
// 32 bits.
func normRows[A gpu.Elem, CA gemvdev.In[A]](ca CA, t gpu.Thread, part []float32, dst []A, x, g []float32, r0, rb, k, stride, d0 int, eps float32) {
	tid, l, wp := t.ThreadIdx().X, t.Lane(), t.Warp()
	if rb > 1 {
		sumSquaresRows(t, part, x, r0, rb, k)
	} else {
		xr := x[r0*k:]
		ss := float32(0)
		for c0 := tid; c0 < k; c0 += normRegs * Threads {
			// Every load of the chunk issued before the first FMA: one
			// round trip to memory per chunk, not per element.
			xc, left := xr[c0:], int32(k-c0)
			var v [normRegs]float32
			//kern:unroll
			for u := range normRegs {
				if int32(u*Threads) < left {
					v[u] = xc[u*Threads]
				}
			}
			//kern:unroll
			for u := range normRegs {
				ss = gpu.FMA(v[u], v[u], ss)
			}
		}
		s := gpu.WarpSum(t, ss)
		if l == 0 {
			part[wp] = s
		}
	}
	t.Sync()
	for i := 0; i < rb; i++ {
		p := i * tcWarps
		tot := (part[p] + part[p+4]) + (part[p+2] + part[p+6]) + ((part[p+1] + part[p+5]) + (part[p+3] + part[p+7]))
		r := gpu.Rsqrt(tot/float32(k) + eps)
		xr, dr := x[(r0+i)*k:], dst[d0+i*stride:]
		for c0 := tid; c0 < k; c0 += scaleRegs * Threads {
			xc, gc, dc, left := xr[c0:], g[c0:], dr[c0:], int32(k-c0)
			//kern:unroll
			for u := range scaleRegs {
				if int32(u*Threads) < left {
					dc[u*Threads] = ca.Round(xc[u*Threads] * r * gc[u*Threads])
				}
			}
		}
	}
}

// prefetchWeight asks L2 for g's first 32·Threads elements (k ≤ 8192,
// Qwen3 up to 32B), a 128-byte line a thread: normRows scales by g only
// after the block's sum, and g, a layer's norm weight last read a decode
// step ago, is by then in DRAM, a round trip on the kernel's chain. A
// kernel calls it first, before the registers its loads will hold are
// live (and before it waits for the kernels before it: a prefetch is a
// hint and never reads stale data).
func prefetchWeight(t gpu.Thread, g []float32, k int) {
	if i := 32 * t.ThreadIdx().X; i < k {
		gpu.PrefetchL2(g, i)
	}
}

// sumSquaresRows is normRows' sum of squares for 2 … MaxM rows: the rows'
// loads of a chunk (rowRegs columns a thread) are issued together, so
// that the rows' round trips to memory overlap, where one row at a time
// would wait for each in turn. Each row's sum is the single-row path's:
// its elements in the same order.
func sumSquaresRows(t gpu.Thread, part []float32, x []float32, r0, rb, k int) {
	tid, l, wp := t.ThreadIdx().X, t.Lane(), t.Warp()
	var ss [MaxM]float32
	for c0 := tid; c0 < k; c0 += rowRegs * Threads {
		left := int32(k - c0)
		var v [MaxM][rowRegs]float32
		//kern:unroll
		for i := range MaxM {
			if i < rb {
				xc := x[(r0+i)*k+c0:]
				//kern:unroll
				for u := range rowRegs {
					if int32(u*Threads) < left {
						v[i][u] = xc[u*Threads]
					}
				}
			}
		}
		//kern:unroll
		for i := range MaxM {
			if i < rb {
				//kern:unroll
				for u := range rowRegs {
					ss[i] = gpu.FMA(v[i][u], v[i][u], ss[i])
				}
			}
		}
	}
	//kern:unroll
	for i := range MaxM {
		if i < rb {
			s := gpu.WarpSum(t, ss[i])
			if l == 0 {
				part[i*tcWarps+wp] = s
			}
		}
	}
}
