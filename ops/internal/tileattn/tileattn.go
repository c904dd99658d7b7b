// Package tileattn is the tile-level twin of ops/internal/attnk's
// FlashAttention-2 forward (sm_80, f16/bf16, head dims 64 and 128, causal
// and not, varlen batches, GQA), written with gpu/tile's attention tiles
// (Frag, Col, Attn, Heads) instead of fragments, lanes and shared
// offsets; same arguments, launch and shared memory as the twin
// (ops/flash.go: grid (⌈maxSeqQ/64⌉, heads, batch), 128 threads,
// 5·64·(hd+8) elements of dynamic shared memory: Q, then K and V double
// buffered). It is kept to compare the two levels (docs/tiles.md,
// docs/performance.md), not behind ops.FlashAttention. Unlike the twin,
// the head-dim-64 kernels keep bounds checks: the range analysis proves
// every shared-memory index (the shared array cut to its five slots,
// the lane offsets of tile.Attn and the slot numbers bounded through the
// helpers), Stage checks each K, V or Q tile once instead of per copy,
// and what is left (the offsets cuSeq, the output rows) is outside the
// KV loop, which is within 3% of its nobounds SASS. The head-dim-128
// ones stay nobounds as the twin (the shared and global indexes are the
// twin's, and out and lse are written only through the block's
// tile.Heads partition): with checks ptxas gives them 223 registers on
// sm_90 where nobounds gets 172, past registers.txt's +4.
package tileattn

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

// D64 and D128 are the head dims, as the registers of an O tile.
type (
	D64  = [8][4]float32
	D128 = [16][4]float32
)

// flash is one block's 64 query rows against their keys: online softmax
// over 64-key tiles, the next K/V tile's copies in flight meanwhile.
func flash[T gpu.Elem, C tile.MMA[T], R tile.FragRegs](t gpu.Thread, out, q, k, v []T, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	po := tile.Heads[C, R](t, out, lse, cuQ, heads)
	sk := tile.HeadSeq[R](cuK, t.BlockIdx().Z, po.Head()/(heads/kvHeads), kvHeads, len(k))
	q0, lq, lk := po.Row0(), po.Seq().Len(), sk.Len()
	if po.Rows() <= 0 {
		return
	}
	kend := lk // causal: up to the block's last row's diagonal (bottom-right aligned)
	if causal {
		kend = min(lk, q0+tile.FlashRows+lk-lq)
	}
	// sm cut to the five slots: a constant length (one check, which a
	// launch with too little shared memory fails), so that the range
	// analysis proves every index into it (docs/tiles.md).
	sm := gpu.DynShared[T](t)[:5*tile.FlashRows*(tile.HeadDim[R]()+tile.FlashPad)]
	at := tile.NewAttn[T, C, R](t)
	kv, vv := tile.Input[C](k), tile.Input[C](v)
	at.Stage(t, sm, 0, tile.Input[C](q), po.Seq(), q0/tile.FlashRows)
	gpu.CpAsyncCommit(t)
	if kend > 0 {
		at.Stage(t, sm, 1, kv, sk, 0)
		at.Stage(t, sm, 3, vv, sk, 0)
	}
	gpu.CpAsyncCommit(t)
	gpu.CpAsyncWait(t, 1)
	t.Sync()
	at = at.LoadQ(t, sm)
	var o tile.Frag[R]
	m, l := tile.FullCol(tile.NegInf()), tile.FullCol(0)
	for j := 0; j*tile.FlashKeys < kend; j++ {
		if (j+1)*tile.FlashKeys < kend { // tile j+1 into the buffers tile j-1 left
			at.Stage(t, sm, 1+(j+1)&1, kv, sk, j+1)
			at.Stage(t, sm, 3+(j+1)&1, vv, sk, j+1)
		}
		gpu.CpAsyncCommit(t)
		gpu.CpAsyncWait(t, 1) // tile j's copies are complete
		t.Sync()
		s := at.Mask(at.QK(t, sm, 1+j&1), q0, j*tile.FlashKeys, lk, lk-lq, causal)
		mx := m.Max(s.RowMax(t))
		shift := mx.Shift(scaleLog2)
		p, alpha := s.Exp2(scaleLog2, shift), m.Exp2(scaleLog2, shift)
		m, l = mx, l.Mul(alpha).Add(p.LaneRowSums())
		o = at.PV(t, o.MulRows(alpha), p, sm, 3+j&1)
		t.Sync() // every warp is done with the buffers before they are refilled
	}
	l = l.QuadSum(t)
	po.Store(t, o.MulRows(l.Inv()))
	if wantLSE {
		po.StoreLSE(t, m, l, scaleLog2)
	}
}

//kern:kernel block=128
func FlashF16D64(t gpu.Thread, out, q, k, v []gpu.Half, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash[gpu.Half, tile.F16, D64](t, out, q, k, v, lse, cuQ, cuK, heads, kvHeads, scaleLog2, causal, wantLSE)
}

//kern:kernel block=128 nobounds
func FlashF16D128(t gpu.Thread, out, q, k, v []gpu.Half, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash[gpu.Half, tile.F16, D128](t, out, q, k, v, lse, cuQ, cuK, heads, kvHeads, scaleLog2, causal, wantLSE)
}

//kern:kernel block=128
func FlashBF16D64(t gpu.Thread, out, q, k, v []gpu.BFloat16, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash[gpu.BFloat16, tile.BF16, D64](t, out, q, k, v, lse, cuQ, cuK, heads, kvHeads, scaleLog2, causal, wantLSE)
}

//kern:kernel block=128 nobounds
func FlashBF16D128(t gpu.Thread, out, q, k, v []gpu.BFloat16, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash[gpu.BFloat16, tile.BF16, D128](t, out, q, k, v, lse, cuQ, cuK, heads, kvHeads, scaleLog2, causal, wantLSE)
}
