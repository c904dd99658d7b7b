package ops

// FlashAttentionBackward: the gradients of FlashAttention with respect to
// q, k and v, by FlashAttention-2's backward algorithm (Dao 2023,
// Algorithm 2): nothing of size seq² is stored; P is recomputed from the
// forward pass's log-sum-exp, and with delta_i = Σ_d dO_i,d·O_i,d,
//
//	P_ij  = exp(scale·q_i·k_j - lse_i)       (0 where masked)
//	dP_ij = dO_i·v_j
//	dS_ij = P_ij·(dP_ij - delta_i)
//	dQ_i  = scale·Σ_j dS_ij·k_j
//	dK_j  = scale·Σ_(h,i) dS_ij·q_i          summed over the query heads of j's KV head
//	dV_j  = Σ_(h,i) P_ij·dO_i
//
// Shapes as FlashAttention's (flash.go): q, o, dO, dQ [totalQ, heads,
// headDim]; k, v, dK, dV [totalK, kvHeads, headDim]; lse and delta
// [heads, totalQ] float32, lse from FlashAttention, delta scratch the
// call fills. T ∈ {float16, bfloat16}; every sum is float32, each
// gradient is rounded to T once. headDim is a multiple of 32 up to 128.
//
// Versions: v1, on CUDA cores (ops/internal/bwdk): three kernels, delta
// (a warp per query row), dK/dV (a warp per key row, looping over the
// queries that see it) and dQ (a warp per query row, looping over its
// keys); each warp holds its row in registers, lane l dims l, l+32, ...,
// and forms every q·k and dO·v as a warp sum. It recomputes S in both the
// dK/dV and the dQ kernel instead of adding dQ with atomics. It is
// correct at any shape and simple to check, not fast: the tiled
// tensor-core kernel (FlashAttention-2's, mma.sync for the five matrix
// products) is the next version.

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/bwdk"
)

var (
	bwdDeltaK = [2]*kern.Kernel{bwdk.DeltaF16Kernel.Kernel(), bwdk.DeltaBF16Kernel.Kernel()}
	bwdKVK    = [2]*kern.Kernel{bwdk.KVF16Kernel.Kernel(), bwdk.KVBF16Kernel.Kernel()}
	bwdQK     = [2]*kern.Kernel{bwdk.QF16Kernel.Kernel(), bwdk.QBF16Kernel.Kernel()}
)

// AttentionGrads are the outputs of FlashAttentionBackward.
type AttentionGrads[T Half16] struct {
	DQ, DK, DV *kern.Buffer[T]
	// Delta is float32 scratch of [Heads, totalQ] (rowsum(dO∘O)).
	Delta *kern.Buffer[float32]
}

// FlashAttentionBackward computes dQ, dK and dV of FlashAttention (layout
// in flash.go) from its inputs q, k, v, its output o and lse, and the
// output gradient do. a.MaxSeqQ is not used.
func FlashAttentionBackward[T Half16](queue kern.Queue, g AttentionGrads[T], q, k, v, o, do *kern.Buffer[T], lse *kern.Buffer[float32], cuSeqQ, cuSeqK *kern.Buffer[int32], a Attention) error {
	s := newShape("ops.FlashAttentionBackward")
	s.atLeast("KVHeads", a.KVHeads, 1)
	s.atLeast("Heads", a.Heads, 1)
	if s.err == nil && a.Heads%a.KVHeads != 0 {
		s.fail("Heads = %d is not a multiple of KVHeads = %d", a.Heads, a.KVHeads)
	}
	if a.HeadDim < 32 || a.HeadDim > 128 || a.HeadDim%32 != 0 {
		s.fail("HeadDim = %d, want a multiple of 32 up to 128", a.HeadDim)
	}
	notNil(s, "q", q)
	notNil(s, "k", k)
	notNil(s, "cuSeqQ", cuSeqQ)
	notNil(s, "cuSeqK", cuSeqK)
	if s.err != nil {
		return s.err
	}
	if cuSeqQ.Len() < 1 || cuSeqK.Len() != cuSeqQ.Len() {
		s.fail("cuSeqQ has %d offsets, cuSeqK %d: want the same number, at least 1", cuSeqQ.Len(), cuSeqK.Len())
	}
	qRow, kRow := s.mul(a.Heads, a.HeadDim), s.mul(a.KVHeads, a.HeadDim)
	if s.err == nil && (q.Len()%qRow != 0 || k.Len()%kRow != 0) {
		s.fail("q has %d elements, k %d: want multiples of heads×headDim = %d and kvHeads×headDim = %d", q.Len(), k.Len(), qRow, kRow)
	}
	if s.err != nil {
		return s.err
	}
	totalQ, totalK := q.Len()/qRow, k.Len()/kRow
	for _, b := range []struct {
		name string
		buf  *kern.Buffer[T]
		n    int
	}{{"o", o, q.Len()}, {"do", do, q.Len()}, {"DQ", g.DQ, q.Len()}, {"v", v, k.Len()}, {"DK", g.DK, k.Len()}, {"DV", g.DV, k.Len()}} {
		buf(s, b.name, b.buf, b.n, "")
	}
	buf(s, "lse", lse, a.Heads*totalQ, "heads×totalQ")
	buf(s, "Delta", g.Delta, a.Heads*totalQ, "heads×totalQ")
	if s.err != nil || totalQ == 0 && totalK == 0 {
		return s.err
	}
	dt := dtypeIndex[T]() - 1
	warps := func(n int) kern.Grid {
		return kern.Blocks(gpu.Dim3{X: max(1, (n+3)/4), Y: 1, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1})
	}
	scale := a.scale()
	if totalQ > 0 {
		if err := s.launch(bwdDeltaK[dt], queue, warps(totalQ*a.Heads), bufArg(g.Delta), bufArg(o), bufArg(do),
			intArg(totalQ), intArg(a.Heads), intArg(a.HeadDim)); err != nil {
			return err
		}
	}
	common := []kern.Arg{bufArg(q), bufArg(k), bufArg(v), bufArg(do), bufArg(lse), bufArg(g.Delta), bufArg(cuSeqQ), bufArg(cuSeqK),
		intArg(totalQ), intArg(totalK), intArg(a.Heads), intArg(a.KVHeads), intArg(a.HeadDim), f32Arg(scale), kern.ScalarArg(a.Causal)}
	if totalK > 0 {
		if err := s.launch(bwdKVK[dt], queue, warps(totalK*a.KVHeads), append([]kern.Arg{bufArg(g.DK), bufArg(g.DV)}, common...)...); err != nil {
			return err
		}
	}
	if totalQ > 0 {
		return s.launch(bwdQK[dt], queue, warps(totalQ*a.Heads), append([]kern.Arg{bufArg(g.DQ)}, common...)...)
	}
	return nil
}
