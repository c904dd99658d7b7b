package gemvnorm

// The decode GEMV with the RMSNorm of its input fused in (ops.Matmul with
// MatmulOpts.RMSNorm on the GEMV path):
//
//	a[i,k]   = In(x[i,k] · rstd_i · g[k]),  rstd_i = 1/√(Σ_k x[i,k]²/K + eps)
//	out[i,j] = act(Σ_k a[i,k]·W[j,k] + bias[j]) + residual[i,j]   (SwiGLU as in Matmul)
//
// x [M, K] float32 (a transformer's residual stream), g [K] float32 (the
// norm's weight), W [N, K] In, out [M, N] O; In ∈ {float16, bfloat16},
// O ∈ {float32, In}.
//
// Why: a decode layer normalises its residual twice, each time into the
// 16-bit input of the projection after it (q/k/v, gate/up), and on an
// H100 a launch costs 4–9 µs however little it moves
// (docs/performance-gpu.md), more than the norm's work. Here every block
// normalises the rows of x it multiplies itself: the N/16 blocks repeat
// the norm (M·K floats each, from L2: 4–20 KiB at batch 1), which costs
// less than a launch.
//
// How: the GEMV is v2's (ops/internal/gemvtc, whose doc explains the
// loads, the k order and the reduction), except where x comes from. After
// the wait for the kernels before (programmatic dependent launch: the
// first W chunks are still loaded before it when the caller says W is
// static), the block reads its rows of x (m ≤ MaxM), sums their
// squares, and writes a = In(x·rstd·g) into shared memory, row stride
// Stride(K) elements; the main loop then loads a lane's 8 elements of x
// from there (LDS.128) where v2 loads them from global memory (LDG.128).
// W, the mma, the reduction and the epilogue are v2's.
//
// Bit-identity: the norm sums as a 256-thread block per row does in
// normCast below and in the Qwen3 engine's rmsNormCast (thread j adds
// x[j], x[j+256], … in order with FMAs, then a warp butterfly and a
// butterfly over the 8 warps, gpu.BlockSum's order), so a is those
// kernels' output bit for bit, and the product is v2's on that a.
//
// Shared memory: Shared bytes (the reduction's 8 KiB, then the row
// partial sums) plus the rows: SharedBytes(m, k). The stride keeps the
// two rows that a quarter warp reads 64 bytes apart in the banks (a row
// is K·2 bytes, often a multiple of 128).
//
// The package is separate from gemvtc to keep each generated file under a
// megabyte; tc.go repeats v2's device helpers (a kernel package compiles
// its own copy).

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/epilogue"
	"github.com/gokern/kern/ops/internal/gemvdev"
)

// Launch shape and limits, for ops.Matmul.
const (
	Rows    = 16           // rows of W per block (columns of out)
	Threads = tcWarps * 32 // threads per block (the norm's sum order depends on it)
	MaxM    = 8            // rows of x: one tile (grid 1 block high)
	Shared  = redBytes + partBytes
)

const (
	tcWarps   = gemvdev.Warps // v2's layout
	tcUnroll  = gemvdev.Unroll
	redBytes  = tcWarps * 256 * 4
	partBytes = MaxM * tcWarps * 4 // a row's 8 warp sums
	// Elements of a row a thread loads at once: in the sum of squares,
	// and (with the norm's weights, while the first W chunks are held)
	// in the scaling, where 16 spills under minblocks=3's 80 registers.
	normRegs  = 16
	scaleRegs = 8
	rowRegs   = 2 // per row, with 2 … 8 rows (sumSquaresRows)
)

// Stride is the shared-memory row stride, in elements, of the normalised
// rows for K columns: K rounded up to 64, plus 32 (64 bytes).
func Stride(k int) int { return (k+63)&^63 + 32 }

// SharedBytes is the dynamic shared memory of a launch over m rows of x
// and k columns.
func SharedBytes(m, k int) int { return Shared + min(m, MaxM)*Stride(k)*2 }

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

// M ≤ 8 only, as v2's narrow kernels (one tile of x): at M > 8, v2's
// second tile would double the prologue's rows and the shared memory,
// and its kernels would need a second package to keep this one's PTX
// under a megabyte; ops.Matmul runs normCast and v2 there instead.
// No minblocks=3 as v2's narrow kernels have: under it ptxas 13.5 spills
// 4 bytes at 80 registers (the first W chunks are held through the
// norm); without, it takes 80 (sm_80) and 78 (sm_90), no spill, which
// still fits three blocks of 256 threads per SM.

//kern:kernel block=256 nobounds pdl
func gemvnormF16F32(t gpu.Thread, out []float32, x, g []float32, w []gpu.Half, bias, res []float32, m, n, k, act, stride int, eps float32, early bool) {
	gemvnorm(gemvdev.TCHalf{}, epilogue.F32{}, t, out, x, g, w, bias, res, m, n, k, act, stride, eps, early)
}

//kern:kernel block=256 nobounds pdl
func gemvnormF16F16(t gpu.Thread, out []gpu.Half, x, g []float32, w []gpu.Half, bias, res []gpu.Half, m, n, k, act, stride int, eps float32, early bool) {
	gemvnorm(gemvdev.TCHalf{}, epilogue.Half{}, t, out, x, g, w, bias, res, m, n, k, act, stride, eps, early)
}

//kern:kernel block=256 nobounds pdl
func gemvnormBF16F32(t gpu.Thread, out []float32, x, g []float32, w []gpu.BFloat16, bias, res []float32, m, n, k, act, stride int, eps float32, early bool) {
	gemvnorm(gemvdev.TCBFloat16{}, epilogue.F32{}, t, out, x, g, w, bias, res, m, n, k, act, stride, eps, early)
}

//kern:kernel block=256 nobounds pdl
func gemvnormBF16BF16(t gpu.Thread, out []gpu.BFloat16, x, g []float32, w []gpu.BFloat16, bias, res []gpu.BFloat16, m, n, k, act, stride int, eps float32, early bool) {
	gemvnorm(gemvdev.TCBFloat16{}, epilogue.BFloat16{}, t, out, x, g, w, bias, res, m, n, k, act, stride, eps, early)
}

// Kernels are the fused kernels, indexed [input: f16, bf16][output: f32,
// the input type], like ops.Matmul's tables.
var Kernels = [2][2]*kern.Kernel{
	{gemvnormF16F32Kernel.Kernel(), gemvnormF16F16Kernel.Kernel()},
	{gemvnormBF16F32Kernel.Kernel(), gemvnormBF16BF16Kernel.Kernel()},
}

// gemvnorm is v2's body with x normalised into shared memory first
// (see the package doc), for m ≤ MaxM: one tile of x, one block row.
func gemvnorm[A gpu.Elem, O any, CA gemvdev.In[A], CO epilogue.Out[O]](ca CA, co CO, t gpu.Thread,
	out []O, x, g []float32, w []A, bias, res []O, m, n, k, act, stride int, eps float32, early bool) {
	prefetchWeight(t, g, k)
	red := gpu.DynShared[float32](t)
	xs := gpu.DynShared[A](t)[Shared/2:] // 2-byte elements, after red and the row sums
	n0 := t.BlockIdx().X * Rows
	l, wp := t.Lane(), t.Warp()
	gr, q := l>>2, l&3
	wa := int32(min(n0+gr, n-1)*k + q*8)
	wb := int32(min(n0+gr+8, n-1)*k + q*8)
	// Rows of x past m are clamped to row m-1 (never stored).
	xa := int32(min(gr, m-1)*stride + q*8)
	k32, q8 := int32(k), int32(q*8)
	full := k32 >> 5
	var acc [4]float32
	c := int32(wp)
	var fa, fb [tcUnroll][4]uint32
	if early && c+(tcUnroll-1)*tcWarps < full {
		fa, fb = gemvdev.LoadW(ca, w, wa, wb, c)
	}
	gpu.WaitPriorGrids(t)
	if !early && c+(tcUnroll-1)*tcWarps < full {
		fa, fb = gemvdev.LoadW(ca, w, wa, wb, c)
	}
	normRows(ca, t, red[redBytes/4:], xs, x, g, 0, m, k, stride, 0, eps)
	t.Sync() // every warp's rows of xs written
	for ; c+(tcUnroll-1)*tcWarps < full; c += tcUnroll * tcWarps {
		var f [tcUnroll][4]uint32
		//kern:unroll
		for u := range tcUnroll {
			f[u] = ca.Pack(gpu.Load8(xs, int(xa+(c+int32(u*tcWarps))<<5)))
		}
		acc = tcMMA(ca, t, acc, fa, fb, f)
		if next := c + tcUnroll*tcWarps; next+(tcUnroll-1)*tcWarps < full {
			fa, fb = gemvdev.LoadW(ca, w, wa, wb, next)
		}
	}
	if c < (k32+31)>>5 { // the warp's last chunks; a lane's past K is zeroed
		var fa, fb, f [tcUnroll][4]uint32
		//kern:unroll
		for u := range tcUnroll {
			kc := (c + int32(u*tcWarps)) << 5
			if kc+q8 < k32 {
				fa[u] = ca.Pack(gpu.Load8(w, int(wa+kc)))
				fb[u] = ca.Pack(gpu.Load8(w, int(wb+kc)))
				f[u] = ca.Pack(gpu.Load8(xs, int(xa+kc)))
			}
		}
		acc = tcMMA(ca, t, acc, fa, fb, f)
	}

	// The warps' sums meet in shared memory, as in v2 (its first tile).
	sw := (gr >> 2) & 1
	//kern:unroll
	for e := range 4 {
		red[wp*256+(gr+8*(e>>1))*8+((2*q+e&1)^sw)] = acc[e]
	}
	t.Sync()
	if wp < tcWarps/2 { // warp-uniform: j < 128
		j := wp*32 + l
		v := red[j]
		//kern:unroll
		for i := 1; i < tcWarps; i++ {
			v += red[i*256+j]
		}
		v1 := gpu.ShflXor(t, v, 8) // W row r^1: lane j^8
		r := j >> 3
		row := j&7 ^ (r>>2)&1
		if r&1 == 0 { // Pair checks the row and column
			epilogue.Pair(co, out, bias, res, row, n0+r, m, n, act, v, v1)
		}
	}
}
