package gemv

// Decode GEMV: ops.Matmul's path for a few rows of A (M ≤ 16) with W[N,K]
// weights, the batch-1..16 token step of a transformer, where the time is
// the time to stream W once from memory.
//
//	out[i,j] = act(Σ_k x[i,k]·W[j,k] + bias[j]) + residual[i,j]   (SwiGLU as in Matmul)
//
// Shapes: x [M, K] In, W [N, K] In (row-major), out [M, N] O (or [M, N/2]
// with SwiGLU); In ∈ {float16, bfloat16}, O ∈ {float32, In}; K a multiple
// of 8 (Matmul sends other K to its v1). The kernels are a package of
// their own to keep each generated file under a megabyte (see
// ops/internal/mm).
//
// Each warp owns four adjacent rows of W (so a SwiGLU gate/up pair lands
// in one warp, and each x chunk serves four rows) and streams them in steps of 256 elements: lane l copies the
// 16-byte chunk l of each row with cp.async (a 128-bit global load,
// LDGSTS.128; every weight byte is read this way), four steps in flight
// per warp, and reads back only the chunks it copied itself, so no
// barrier is needed, with 128-bit shared loads (a quarter warp reads 128
// contiguous bytes: no bank conflicts). The rows of x go the same way,
// each warp copying its own (x is small and stays in cache). Each lane
// accumulates gemvRows rows of x in float32 registers; M > gemvRows takes
// more passes over W (from L2).
// The warp's partial sums meet with shuffles, and lane i finishes row i.
//
// Block: 2 warps (8 rows of W; 32 KiB of shared memory for the stages),
// so that Qwen3-sized N (1024 to 9728) gives at least 128 blocks. Split-K is not used: N/8 blocks already cover the
// GPU for every N ≥ 1024.
//
// Versions: this is v1. ops.Matmul runs v2 (ops/internal/gemvtc, the
// tensor cores, one pass over W for any M ≤ 16) and keeps v1 for
// side-by-side timing while ops.GEMVv1 is set.

import (
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/epilogue"
)

// Launch shape and limits, for ops.Matmul.
const (
	Warps        = gemvWarps
	RowsPerBlock = gemvWarps * gemvWRows // rows of W (columns of the output)
	Shared       = gemvShared            // dynamic shared bytes
	MaxM         = gemvMaxM              // ops.Matmul's largest M for this path
)

const (
	gemvWarps  = 2
	gemvWRows  = 4                                 // rows of W per warp (even: SwiGLU pairs stay in a warp)
	gemvStages = 4                                 // steps in flight per warp (a power of 2)
	gemvStep   = 256                               // elements of a row per step: 32 lanes × 8
	gemvRows   = 4                                 // rows of x per pass
	gemvSlots  = gemvWRows + gemvRows              // rows per stage: W's, then x's
	gemvWarpSh = gemvStages * gemvSlots * gemvStep // shared elements per warp
	gemvShared = gemvWarps * gemvWarpSh * 2        // dynamic shared bytes
	gemvMaxM   = 16
)

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

//kern:kernel block=128 nobounds
func gemvF16F32(t gpu.Thread, out []float32, x, w []gpu.Half, bias, res []float32, m, n, k, act int) {
	gemv(f16g{}, epilogue.F32{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[uint32](t), out, x, w, bias, res, m, n, k, act)
}

//kern:kernel block=128 nobounds
func gemvF16F16(t gpu.Thread, out []gpu.Half, x, w []gpu.Half, bias, res []gpu.Half, m, n, k, act int) {
	gemv(f16g{}, epilogue.Half{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[uint32](t), out, x, w, bias, res, m, n, k, act)
}

//kern:kernel block=128 nobounds
func gemvBF16F32(t gpu.Thread, out []float32, x, w []gpu.BFloat16, bias, res []float32, m, n, k, act int) {
	gemv(bf16g{}, epilogue.F32{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[uint32](t), out, x, w, bias, res, m, n, k, act)
}

//kern:kernel block=128 nobounds
func gemvBF16BF16(t gpu.Thread, out []gpu.BFloat16, x, w []gpu.BFloat16, bias, res []gpu.BFloat16, m, n, k, act int) {
	gemv(bf16g{}, epilogue.BFloat16{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[uint32](t), out, x, w, bias, res, m, n, k, act)
}

// gemvCodec is an input type of the GEMV: load converts one element, lo
// and hi the two packed in a 32-bit word.
type gemvCodec[T any] interface {
	load(T) float32
	lo(w uint32) float32
	hi(w uint32) float32
}

type f16g struct{}

func (f16g) load(x gpu.Half) float32 { return x.Float32() }
func (f16g) lo(w uint32) float32     { return gpu.Half(uint16(w)).Float32() }
func (f16g) hi(w uint32) float32     { return gpu.Half(uint16(w >> 16)).Float32() }

type bf16g struct{}

func (bf16g) load(x gpu.BFloat16) float32 { return x.Float32() }
func (bf16g) lo(w uint32) float32         { return math.Float32frombits(w << 16) }
func (bf16g) hi(w uint32) float32         { return math.Float32frombits(w &^ 0xffff) }

func gemv[A gpu.Elem, O any, CA gemvCodec[A], CO epilogue.Out[O]](ca CA, co CO, t gpu.Thread, sh []A, sw []uint32,
	out []O, x, w []A, bias, res []O, m, n, k, act int) {
	l := t.Lane()
	row0 := (t.BlockIdx().X*gemvWarps + t.Warp()) * gemvWRows
	if row0 < n { // warp-uniform
		sh = sh[t.Warp()*gemvWarpSh:]
		sw = sw[t.Warp()*gemvWarpSh>>1:]
		steps := int32((k + gemvStep - 1) / gemvStep)
		// Source offsets of the warp's rows, computed once: a row past N
		// is clamped to the last (its sums are never stored).
		var wOff [gemvWRows]int32
		//kern:unroll
		for r := range gemvWRows {
			wOff[r] = int32(min(row0+r, n-1) * k)
		}
		k32, l32 := int32(k), int32(l)
		for mb := 0; mb < m; mb += gemvRows {
			var acc [gemvWRows][gemvRows]float32
			var xOff [gemvRows]int32
			//kern:unroll
			for i := range gemvRows {
				xOff[i] = int32(min(mb+i, m-1) * k)
			}
			//kern:unroll
			for s := range gemvStages - 1 {
				if int32(s) < steps {
					gemvIssue(t, sh, w, x, int32(s), wOff, xOff, mb, m, k32, l32)
				} else {
					gpu.CpAsyncCommit(t)
				}
			}
			for st := int32(0); st < steps; st++ {
				gpu.CpAsyncWait(t, gemvStages-2)
				kc := int(st*gemvStep) + l*8 // this lane's 8 elements
				// Indices are non-negative: shifts and masks, not Go's signed
				// / and %, which cost a 64-bit division call in SASS.
				base := int(st&(gemvStages-1))*gemvSlots*gemvStep>>1 + l*4
				var ws [gemvWRows][4]uint32
				//kern:unroll
				for r := range gemvWRows {
					ws[r] = gpu.Load4(sw, base+r*gemvStep>>1)
				}
				if kc < k {
					//kern:unroll
					for i := range gemvRows {
						if mb+i < m {
							xs := gpu.Load4(sw, base+(gemvWRows+i)*gemvStep>>1)
							//kern:unroll
							for r := range gemvWRows {
								acc[r][i] = gemvDot(ca, acc[r][i], xs, ws[r])
							}
						}
					}
				}
				if nx := st + gemvStages - 1; nx < steps {
					gemvIssue(t, sh, w, x, nx, wOff, xOff, mb, m, k32, l32)
				} else {
					gpu.CpAsyncCommit(t) // an empty group keeps the wait count
				}
			}
			gpu.CpAsyncWait(t, 0)
			// Reduce over the warp; lane i keeps row mb+i.
			var v [gemvWRows]float32
			//kern:unroll
			for i := range gemvRows {
				//kern:unroll
				for r := range gemvWRows {
					s := gpu.WarpSum(t, acc[r][i])
					if l == i {
						v[r] = s
					}
				}
			}
			if l < gemvRows {
				//kern:unroll
				for r := 0; r < gemvWRows; r += 2 { // Pair checks the row and column
					epilogue.Pair(co, out, bias, res, mb+l, row0+r, m, n, act, v[r], v[r+1])
				}
			}
		}
	}
}

// gemvIssue copies step st of the warp's rows of W and of rows mb.. of
// x (chunk l of each, from the row offsets wOff and xOff) into stage
// st%gemvStages and commits the group (st < steps: past the last step
// the caller commits an empty group). A lane's chunk past K, in the last
// step, is copied from the row's last chunk instead: gemv never reads it
// (it skips kc ≥ k), and a plain copy needs no predicate or branch. Rows
// of x past m are not copied at all.
func gemvIssue[A gpu.Elem](t gpu.Thread, sh, w, x []A, st int32, wOff [gemvWRows]int32, xOff [gemvRows]int32, mb, m int, k, l int32) {
	kc := min(st*gemvStep+l*8, k-8)
	d := (st&(gemvStages-1))*gemvSlots*gemvStep + l*8
	//kern:unroll
	for r := range gemvWRows {
		gpu.CpAsync(t, &sh[d+int32(r*gemvStep)], &w[wOff[r]+kc], 16)
	}
	// Row mb of x always exists; the others sit behind one uniform
	// branch, so that M = 1 does not issue their predicated copies.
	gpu.CpAsync(t, &sh[d+int32(gemvWRows*gemvStep)], &x[xOff[0]+kc], 16)
	if mb+1 < m {
		//kern:unroll
		for i := 1; i < gemvRows; i++ {
			if mb+i < m {
				gpu.CpAsync(t, &sh[d+int32((gemvWRows+i)*gemvStep)], &x[xOff[i]+kc], 16)
			}
		}
	}
	gpu.CpAsyncCommit(t)
}

// gemvDot adds x[0..7]·w[0..7] to a; each of x and w is four words of
// two packed elements (the lower element in the low half).
func gemvDot[A any, CA gemvCodec[A]](ca CA, a float32, xs, ws [4]uint32) float32 {
	//kern:unroll
	for j := range 4 {
		a = gpu.FMA(ca.hi(xs[j]), ca.hi(ws[j]), gpu.FMA(ca.lo(xs[j]), ca.lo(ws[j]), a))
	}
	return a
}

// Kernels are the GEMV kernels, indexed [input: f16, bf16][output: f32,
// the input type], like ops.Matmul's tables.
var Kernels = [2][2]*kern.Kernel{
	{gemvF16F32Kernel.Kernel(), gemvF16F16Kernel.Kernel()},
	{gemvBF16F32Kernel.Kernel(), gemvBF16BF16Kernel.Kernel()},
}
