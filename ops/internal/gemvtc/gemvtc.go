package gemvtc

// Version v2 of the decode GEMV (ops.Matmul with M ≤ 16 and W[N,K]): the
// product on the tensor cores, with the weights streamed straight into
// registers.
//
//	out[i,j] = act(Σ_k x[i,k]·W[j,k] + bias[j]) + residual[i,j]   (SwiGLU as in Matmul)
//
// Why not v1 (ops/internal/gemv): v1 spends two FMAs and two conversions
// per weight per row of x, and handles 4 rows of x per pass over W, so
// M = 16 is four passes and the SM's FMA pipe, not memory, sets its
// time (2.6–4× M = 1 on an H100). Its 2-warp blocks of 8 rows also give
// only N/8 blocks, one warp per 4 rows streaming all of K, so small N
// (the o and down projections, N = 2560) has few bytes in flight.
//
// mma.sync m16n8k16 computes outᵀ = W·xᵀ a 16×8 tile at a time: A is 16
// rows of W, B is xᵀ (8 rows of x as its columns), D float32. M ≤ 8 is
// one mma per 16 columns of K, M ≤ 16 two (tiles of rows 0–7 and 8–15 of
// x share the A fragment), so M = 16 reads W once, as M = 1 does, and the
// tensor core does the multiply-adds at a rate far above what memory
// feeds it.
//
// Loads: the mma's k order is free (a permutation of k applied to A and
// B alike leaves the sum unchanged), so lane (g, q) = (l/4, l%4) takes,
// in each chunk of 32 columns of K, the 8 elements 8q..8q+7 of its rows
// — one 16-byte load (LDG.128) each of W rows g and g+8 and of x row g
// (and g+8 for M > 8) — and its k16 step h uses the words 2h, 2h+1 as
// the mma's columns {2q, 2q+1} and {2q+8, 2q+9}: the words as loaded are
// the A and B registers. Four lanes cover a row's 64 bytes of a chunk:
// whole sectors. Rows of x past M are clamped to row M-1 (at M = 1 the
// eight groups read the same 64 bytes, one request), rows of W past N to
// row N-1; both only feed output columns that are never stored.
//
// Rows of x: block (bx, by) takes rows 16·by … 16·by+15, so any M runs
// (ops.Matmul's KernelGEMV), W read once per 16 rows. A row's sum is the
// same instructions in the same order whatever M is and whichever block
// holds it (the mma computes each output element alone; the K split and
// the reduction below do not depend on M): the GEMV is batch-invariant.
//
// Block: 8 warps on the same 16 rows of W, split over K: warp w takes
// chunks w, w+8, w+16, …, tcUnroll of them per iteration, all loads of an
// iteration issued before its mma (4 × 2 × 16 bytes of W per lane in
// flight, 4 KiB per warp; no shared memory and no barrier in the loop).
// N/16 blocks of 8 warps: 1280 warps for N = 2560, about 10 per SM of an
// H100, 40 KiB of weights in flight per SM. The chunks wholly inside K
// run unpredicated; the last iteration (at most tcUnroll chunks of the
// warp, one possibly past K) zeroes the fragments of a lane whose 8
// elements lie past K (K is a multiple of 8: all in or all out).
//
// The 8 warps' partial sums meet in 8 KiB of shared memory: warp w
// writes D (tile t, W row r, x row i) at w·256 + t·128 + r·8 + (i%8 ^
// s(r)), s(r) = (r/4)%2, which puts the 32 lanes of each store in 32
// banks; thread j then sums the 8 values at j and, with its partner lane
// j^8 (the next W row), finishes a pair of columns as Matmul's epilogue
// does (bias, SiLU, GELU or SwiGLU of an interleaved gate/up pair,
// residual, cast).

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/epilogue"
	"github.com/gokern/kern/ops/internal/gemvdev"
)

// Launch shape and limits, for ops.Matmul.
const (
	Rows    = 16           // rows of W per block (columns of out)
	Threads = tcWarps * 32 // threads per block
	Shared  = tcWarps * 256 * 4
	MaxM    = 16 // rows of x a block takes (grid y: ⌈M/16⌉ blocks)
)

const (
	tcWarps  = gemvdev.Warps
	tcUnroll = gemvdev.Unroll
)

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

//kern:kernel block=256 nobounds pdl
func gemvtcF16F32(t gpu.Thread, out []float32, x, w []gpu.Half, bias, res []float32, m, n, k, act int, early bool) {
	gemvtc(gemvdev.TCHalf{}, epilogue.F32{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, m, n, k, act, early, m > 8)
}

//kern:kernel block=256 nobounds pdl
func gemvtcF16F16(t gpu.Thread, out []gpu.Half, x, w []gpu.Half, bias, res []gpu.Half, m, n, k, act int, early bool) {
	gemvtc(gemvdev.TCHalf{}, epilogue.Half{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, m, n, k, act, early, m > 8)
}

//kern:kernel block=256 nobounds pdl
func gemvtcBF16F32(t gpu.Thread, out []float32, x, w []gpu.BFloat16, bias, res []float32, m, n, k, act int, early bool) {
	gemvtc(gemvdev.TCBFloat16{}, epilogue.F32{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, m, n, k, act, early, m > 8)
}

//kern:kernel block=256 nobounds pdl
func gemvtcBF16BF16(t gpu.Thread, out []gpu.BFloat16, x, w []gpu.BFloat16, bias, res []gpu.BFloat16, m, n, k, act int, early bool) {
	gemvtc(gemvdev.TCBFloat16{}, epilogue.BFloat16{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, m, n, k, act, early, m > 8)
}

// The narrow kernels take M ≤ 8 only: without the second tile of x
// (constant false after inlining) a thread needs fewer registers, so
// three blocks fit an SM where the kernels above fit two (minblocks=3:
// ptxas keeps them at 85 registers), half as many warps again with
// weights in flight, and Qwen3-4B's 384 blocks of its q/k/v projection
// run in one wave of an H100 instead of 1.5.

//kern:kernel block=256 minblocks=3 nobounds pdl
func gemvtcNarrowF16F32(t gpu.Thread, out []float32, x, w []gpu.Half, bias, res []float32, m, n, k, act int, early bool) {
	gemvtc(gemvdev.TCHalf{}, epilogue.F32{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, m, n, k, act, early, false)
}

//kern:kernel block=256 minblocks=3 nobounds pdl
func gemvtcNarrowF16F16(t gpu.Thread, out []gpu.Half, x, w []gpu.Half, bias, res []gpu.Half, m, n, k, act int, early bool) {
	gemvtc(gemvdev.TCHalf{}, epilogue.Half{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, m, n, k, act, early, false)
}

//kern:kernel block=256 minblocks=3 nobounds pdl
func gemvtcNarrowBF16F32(t gpu.Thread, out []float32, x, w []gpu.BFloat16, bias, res []float32, m, n, k, act int, early bool) {
	gemvtc(gemvdev.TCBFloat16{}, epilogue.F32{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, m, n, k, act, early, false)
}

//kern:kernel block=256 minblocks=3 nobounds pdl
func gemvtcNarrowBF16BF16(t gpu.Thread, out []gpu.BFloat16, x, w []gpu.BFloat16, bias, res []gpu.BFloat16, m, n, k, act int, early bool) {
	gemvtc(gemvdev.TCBFloat16{}, epilogue.BFloat16{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, m, n, k, act, early, false)
}

// Kernels are v2's kernels, indexed [input: f16, bf16][output: f32, the
// input type], like ops.Matmul's tables; Narrow the same for M ≤ 8.
var (
	Kernels = [2][2]*kern.Kernel{
		{gemvtcF16F32Kernel.Kernel(), gemvtcF16F16Kernel.Kernel()},
		{gemvtcBF16F32Kernel.Kernel(), gemvtcBF16BF16Kernel.Kernel()},
	}
	Narrow = [2][2]*kern.Kernel{
		{gemvtcNarrowF16F32Kernel.Kernel(), gemvtcNarrowF16F16Kernel.Kernel()},
		{gemvtcNarrowBF16F32Kernel.Kernel(), gemvtcNarrowBF16BF16Kernel.Kernel()},
	}
)

func gemvtc[A gpu.Elem, O any, CA gemvdev.In[A], CO epilogue.Out[O]](ca CA, co CO, t gpu.Thread, red []float32,
	out []O, x, w []A, bias, res []O, m, n, k, act int, early, two bool) {
	n0 := t.BlockIdx().X * Rows
	r0 := t.BlockIdx().Y * MaxM // the block's rows of x: r0 … r0+15
	l, wp := t.Lane(), t.Warp()
	g, q := l>>2, l&3
	// The lane's offsets at chunk 0 (32-bit: Matmul keeps every buffer
	// under 2³¹ elements).
	wa := int32(min(n0+g, n-1)*k + q*8)
	wb := int32(min(n0+g+8, n-1)*k + q*8)
	xa := int32(min(r0+g, m-1)*k + q*8)
	xb := int32(min(r0+g+8, m-1)*k + q*8)
	// two (uniform) is the second tile of x: m > 8. A last block of 8
	// rows or fewer runs it too, on rows clamped to m-1, never stored.
	k32, q8 := int32(k), int32(q*8)
	full := k32 >> 5 // chunks wholly inside K
	var acc0, acc1 [4]float32
	c := int32(wp)
	// The first iteration is peeled: its W chunks are loaded before the
	// wait for the kernels before this one (programmatic dependent
	// launch, gpu/pdl.go) when the caller says no such kernel writes W
	// (early): at K ≤ 1024 that is all of the block's weights, streamed
	// while the kernel before finishes. x, bias and res are read only
	// after the wait. The loop after it loads each iteration's W and x
	// together, as before the peel: carrying the next iteration's W
	// through the loop instead cost 64 more SASS per iteration
	// (gemvtcNarrowBF16BF16 sm_80, 169 → 233: the copies of the carried
	// fragments and the prefetch's branch).
	var fa, fb [tcUnroll][4]uint32
	first := c+(tcUnroll-1)*tcWarps < full
	if early && first {
		fa, fb = gemvdev.LoadW(ca, w, wa, wb, c)
	}
	gpu.WaitPriorGrids(t)
	if first {
		if !early {
			fa, fb = gemvdev.LoadW(ca, w, wa, wb, c)
		}
		f0, f1 := tcLoadX(ca, x, xa, xb, c, two)
		acc0, acc1 = tcMMA(ca, t, acc0, acc1, fa, fb, f0, f1, two)
		c += tcUnroll * tcWarps
	}
	for ; c+(tcUnroll-1)*tcWarps < full; c += tcUnroll * tcWarps {
		var fa, fb, f0, f1 [tcUnroll][4]uint32
		//kern:unroll
		for u := range tcUnroll {
			kc := (c + int32(u*tcWarps)) << 5
			fa[u] = ca.Pack(gpu.Load8(w, int(wa+kc)))
			fb[u] = ca.Pack(gpu.Load8(w, int(wb+kc)))
			f0[u] = ca.Pack(gpu.Load8(x, int(xa+kc)))
			if two {
				f1[u] = ca.Pack(gpu.Load8(x, int(xb+kc)))
			}
		}
		acc0, acc1 = tcMMA(ca, t, acc0, acc1, fa, fb, f0, f1, two)
	}
	if c < (k32+31)>>5 { // the warp's last chunks; a lane's past K is zeroed
		var fa, fb, f0, f1 [tcUnroll][4]uint32
		//kern:unroll
		for u := range tcUnroll {
			kc := (c + int32(u*tcWarps)) << 5
			if kc+q8 < k32 {
				fa[u] = ca.Pack(gpu.Load8(w, int(wa+kc)))
				fb[u] = ca.Pack(gpu.Load8(w, int(wb+kc)))
				f0[u] = ca.Pack(gpu.Load8(x, int(xa+kc)))
				if two {
					f1[u] = ca.Pack(gpu.Load8(x, int(xb+kc)))
				}
			}
		}
		acc0, acc1 = tcMMA(ca, t, acc0, acc1, fa, fb, f0, f1, two)
	}

	// The warps' sums meet in shared memory (see the package doc). Lane
	// (g, q) holds D[g][2q], D[g][2q+1] in acc[0..1] and D[g+8][..] in
	// acc[2..3], for rows 0–7 of x in acc0 and 8–15 in acc1.
	sw := (g >> 2) & 1
	//kern:unroll
	for e := range 4 {
		i := wp*256 + (g+8*(e>>1))*8 + ((2*q + e&1) ^ sw)
		red[i] = acc0[e]
		if two {
			red[i+128] = acc1[e]
		}
	}
	t.Sync()
	j := wp*32 + l
	if wp < tcWarps/2 || two { // warp-uniform: j < 128 or the second tile
		v := red[j]
		//kern:unroll
		for i := 1; i < tcWarps; i++ {
			v += red[i*256+j]
		}
		v1 := gpu.ShflXor(t, v, 8) // W row r^1: lane j^8
		r := (j & 127) >> 3
		row := r0 + (j>>7)*8 + (j&7 ^ (r>>2)&1)
		if r&1 == 0 { // Pair checks the row and column
			epilogue.Pair(co, out, bias, res, row, n0+r, m, n, act, v, v1)
		}
	}
}

// tcLoadX loads the x chunks of the iteration at chunk c: rows g and
// (two) g+8 of the block's tile, columns 8q..8q+7 of each chunk.
func tcLoadX[A gpu.Elem, CA gemvdev.In[A]](ca CA, x []A, xa, xb, c int32, two bool) (f0, f1 [tcUnroll][4]uint32) {
	//kern:unroll
	for u := range tcUnroll {
		kc := (c + int32(u*tcWarps)) << 5
		f0[u] = ca.Pack(gpu.Load8(x, int(xa+kc)))
		if two {
			f1[u] = ca.Pack(gpu.Load8(x, int(xb+kc)))
		}
	}
	return f0, f1
}

// tcMMA adds an iteration's chunks to the accumulators: per chunk two
// k16 steps, each one mma per tile of x (see the package doc for the k
// order).
func tcMMA[A any, CA gemvdev.In[A]](ca CA, t gpu.Thread, acc0, acc1 [4]float32, fa, fb, f0, f1 [tcUnroll][4]uint32, two bool) ([4]float32, [4]float32) {
	//kern:unroll
	for u := range tcUnroll {
		//kern:unroll
		for h := range 2 {
			a := [4]uint32{fa[u][2*h], fb[u][2*h], fa[u][2*h+1], fb[u][2*h+1]}
			acc0 = ca.MMA(t, a, [2]uint32{f0[u][2*h], f0[u][2*h+1]}, acc0)
			if two {
				acc1 = ca.MMA(t, a, [2]uint32{f1[u][2*h], f1[u][2*h+1]}, acc1)
			}
		}
	}
	return acc0, acc1
}
