// Package i8gemv holds the W8A8 decode GEMV behind ops.MatmulInt8 for a
// few rows of activations (M ≤ 16, the batch-1..16 token step), where the
// time is the time to stream the int8 weights once from memory:
//
//	c[i,j] = aScale[i] · wScale[j] · Σ_k a[i,k]·w[j,k]
//
// Shapes (row-major): a [M, K] int8, aScales [M] float32, w [N, K] int8,
// wScales [N] float32, c [M, N] O ∈ {float32, float16, bfloat16}; K a
// multiple of 16 (one 16-byte chunk, so every row starts 16-byte aligned
// and a chunk is all inside K or all outside; ops sends other K to
// internal/i8's v1). A package of its own to keep each generated file
// under a megabyte (see ops/internal/mm).
//
// Each warp owns four rows of W and walks K in steps of 128 bytes: lane l
// copies the 16-byte chunk l%8 of W row l/8 and the same chunk of row
// l/8 of the current four rows of a (cp.async of 16 bytes, LDGSTS.128:
// every weight byte is read with a 128-bit load), four steps in flight
// per warp. After a step lands (cp.async.wait_group, then a warp barrier,
// since a lane reads the chunks of a that other lanes copied) lane l reads
// its 16 weights and the matching 16 activations of each row of a with
// 128-bit shared loads (a quarter warp reads 128 contiguous bytes: no bank
// conflicts) and sums the products in int32 with dp4a, four bytes per
// instruction (gpu.Dp4a; exact while K < 2³¹/128², about 131 000, as
// internal/i8's bound). The eight lanes of a
// row then meet with three shuffles, and the sums are scaled as i8's v1
// scales them (aScale·wScale·float32(sum), the same float32 operations in
// the same order, so both versions give the same bits).
//
// Block: 2 warps (8 rows of W, 8 KiB of shared memory). M > 4 takes more
// passes over the warp's rows of W (from L2).
package i8gemv

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// Launch shape and limits, for ops.MatmulInt8.
const (
	Warps        = gWarps
	RowsPerBlock = gWarps * gWRows  // rows of W (columns of c) per block
	Shared       = gWarps * gWarpSh // dynamic shared bytes
	KAlign       = gChunk           // K must be a multiple
	MaxM         = 16               // ops.MatmulInt8's largest M for this path
)

const (
	gWarps  = 2
	gWRows  = 4   // rows of W per warp
	gRows   = 4   // rows of a per pass
	gStages = 4   // steps in flight (a power of 2)
	gChunk  = 16  // bytes per lane per row per step
	gStep   = 128 // bytes of a row per step: 8 lanes × 16
	gStageW = gWRows * gStep
	gStage  = gStageW + gRows*gStep // bytes per stage: W's rows, then a's
	gWarpSh = gStages * gStage
)

//kern:kernel block=64 nobounds
func i8gemvF32(t gpu.Thread, c []float32, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	i8gemv(f32c{}, t, gpu.DynShared[int8](t), gpu.DynShared[uint32](t), c, a, as, w, ws, m, n, k)
}

//kern:kernel block=64 nobounds
func i8gemvF16(t gpu.Thread, c []gpu.Half, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	i8gemv(f16c{}, t, gpu.DynShared[int8](t), gpu.DynShared[uint32](t), c, a, as, w, ws, m, n, k)
}

//kern:kernel block=64 nobounds
func i8gemvBF16(t gpu.Thread, c []gpu.BFloat16, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	i8gemv(bf16c{}, t, gpu.DynShared[int8](t), gpu.DynShared[uint32](t), c, a, as, w, ws, m, n, k)
}

// Kernels are indexed by output type: float32, float16, bfloat16.
var Kernels = [3]*kern.Kernel{i8gemvF32Kernel.Kernel(), i8gemvF16Kernel.Kernel(), i8gemvBF16Kernel.Kernel()}

func i8gemv[O any, CO codec[O]](co CO, t gpu.Thread, sb []int8, sw []uint32,
	c []O, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	l := t.Lane()
	row0 := (t.BlockIdx().X*gWarps + t.Warp()) * gWRows
	if row0 < n { // warp-uniform
		wsh := int32(t.Warp() * gWarpSh) // this warp's stages, in bytes
		wr, wc := l>>3, l&7              // this lane's row (of 4) and chunk (of 8)
		row := row0 + wr
		steps := int32((k + gStep - 1) >> 7) // a shift: Go's signed / is a 64-bit division call in SASS
		// Offsets computed once (32-bit: ops keeps every operand under
		// 2³¹ elements): a row past N is clamped to the last, whose sums
		// are computed and never stored.
		wSrc := int32(min(row, n-1) * k)
		k32, wc32 := int32(k), int32(wc)
		for mb := 0; mb < m; mb += gRows {
			var acc [gRows]int32
			left := int32(m - mb) // rows of a in this pass, compared in 32 bits in the loop
			// The row of a this lane copies; rows past m are not copied
			// (and never read).
			ar := mb + wr
			aSrc := int32(min(ar, m-1) * k)
			//kern:unroll
			for s := range gStages - 1 {
				if int32(s) < steps {
					gIssue(t, sb, a, w, wsh, int32(s), wSrc, aSrc, ar < m, k32, int32(l))
				} else {
					gpu.CpAsyncCommit(t)
				}
			}
			for st := int32(0); st < steps; st++ {
				gpu.CpAsyncWait(t, gStages-2)
				t.SyncWarp()                          // chunks of a other lanes copied
				base := wsh + (st&(gStages-1))*gStage // bytes
				if kc := st*gStep + wc32*gChunk; kc < k32 {
					wv := gpu.Load4(sw, int((base+int32(l)*gChunk)>>2))
					//kern:unroll
					for i := range gRows {
						if int32(i) < left {
							xv := gpu.Load4(sw, int((base+gStageW+int32(i*gStep)+wc32*gChunk)>>2))
							s := acc[i]
							//kern:unroll
							for j := range 4 {
								s = gpu.Dp4a(wv[j], xv[j], s)
							}
							acc[i] = s
						}
					}
				}
				t.SyncWarp() // every lane is done with the stage before it is refilled
				if nx := st + gStages - 1; nx < steps {
					gIssue(t, sb, a, w, wsh, nx, wSrc, aSrc, ar < m, k32, int32(l))
				} else {
					gpu.CpAsyncCommit(t) // an empty group keeps the wait count
				}
			}
			gpu.CpAsyncWait(t, 0)
			//kern:unroll
			for i := range gRows {
				v := acc[i]
				//kern:unroll
				for off := 1; off < 8; off *= 2 {
					v += gpu.ShflXor(t, v, off)
				}
				if wc == 0 && row < n && mb+i < m {
					c[(mb+i)*n+row] = co.store(as[mb+i] * ws[row] * float32(v))
				}
			}
		}
	}
}

// gIssue copies step st (< steps) into its stage: the lane's 16-byte
// chunk of its W row (which starts at byte wSrc) and, when copyA, the same
// chunk of its row of a (from aSrc), then commits the group. A chunk past
// K, in the last step, is copied from the row's last chunk instead:
// i8gemv never reads it (it skips kc ≥ k), and a plain copy needs no
// predicate.
func gIssue(t gpu.Thread, sb, a, w []int8, wsh, st, wSrc, aSrc int32, copyA bool, k, l int32) {
	base := wsh + (st&(gStages-1))*gStage
	kc := min(st*gStep+(l&7)*gChunk, k-gChunk)
	gpu.CpAsync(t, &sb[base+l*gChunk], &w[wSrc+kc], gChunk)
	if copyA {
		gpu.CpAsync(t, &sb[base+gStageW+l*gChunk], &a[aSrc+kc], gChunk)
	}
	gpu.CpAsyncCommit(t)
}

// Output codecs, as ops' (dtype.go).
type codec[T any] interface{ store(float32) T }

type f32c struct{}

func (f32c) store(v float32) float32 { return v }

type f16c struct{}

func (f16c) store(v float32) gpu.Half { return gpu.ToHalf(v) }

type bf16c struct{}

func (bf16c) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }
