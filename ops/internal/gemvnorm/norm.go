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
)

//kern:kernel block=256 pdl
func normCastF16(t gpu.Thread, out []gpu.Half, x, g []float32, k int, eps float32) {
	gpu.WaitPriorGrids(t)
	normRows(f16g{}, t, gpu.DynShared[float32](t), out, x, g, t.BlockIdx().X, 1, k, k, t.BlockIdx().X*k, eps)
}

//kern:kernel block=256 pdl
func normCastBF16(t gpu.Thread, out []gpu.BFloat16, x, g []float32, k int, eps float32) {
	gpu.WaitPriorGrids(t)
	normRows(bf16g{}, t, gpu.DynShared[float32](t), out, x, g, t.BlockIdx().X, 1, k, k, t.BlockIdx().X*k, eps)
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
func normRows[A gpu.Elem, CA tcCodec[A]](ca CA, t gpu.Thread, part []float32, dst []A, x, g []float32, r0, rb, k, stride, d0 int, eps float32) {
	tid, l, wp := t.ThreadIdx().X, t.Lane(), t.Warp()
	for i := 0; i < rb; i++ {
		base := (r0 + i) * k
		ss := float32(0)
		for c0 := 0; c0 < k; c0 += normRegs * Threads {
			// Every load of the chunk issued before the first FMA: one
			// round trip to memory per chunk, not per element.
			var v [normRegs]float32
			//kern:unroll
			for u := range normRegs {
				if j := c0 + tid + u*Threads; j < k {
					v[u] = x[base+j]
				}
			}
			//kern:unroll
			for u := range normRegs {
				ss = gpu.FMA(v[u], v[u], ss)
			}
		}
		s := gpu.WarpSum(t, ss)
		if l == 0 {
			part[i*tcWarps+wp] = s
		}
	}
	t.Sync()
	for i := 0; i < rb; i++ {
		p := i * tcWarps
		tot := (part[p] + part[p+4]) + (part[p+2] + part[p+6]) + ((part[p+1] + part[p+5]) + (part[p+3] + part[p+7]))
		r := gpu.Rsqrt(tot/float32(k) + eps)
		base, d := (r0+i)*k, d0+i*stride
		for c0 := 0; c0 < k; c0 += scaleRegs * Threads {
			//kern:unroll
			for u := range scaleRegs {
				if j := c0 + tid + u*Threads; j < k {
					dst[d+j] = ca.round(x[base+j] * r * g[j])
				}
			}
		}
	}
}
