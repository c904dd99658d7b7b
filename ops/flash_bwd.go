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
// gradient is rounded to T once. headDim is a multiple of 32 up to 256.
//
// Versions, both kept; the op picks v2 at head dims 64 and 128, v1
// elsewhere:
//
//   - v1, on CUDA cores (ops/internal/bwdk): three kernels, delta (a warp
//     per query row), dK/dV (a warp per key row, looping over the queries
//     that see it) and dQ (a warp per query row, looping over its keys);
//     each warp holds its row in registers, lane l dims l, l+32, ..., and
//     forms every q·k and dO·v as a warp sum. Correct at any head dim
//     that is a multiple of 32 up to 256, simple to check, not fast.
//   - v2, on the tensor cores (ops/internal/bwdkv, bwdq; bwdkv's package
//     doc has the tiling): v1's delta kernel, then FlashAttention-2's five
//     matrix products on mma.sync m16n8k16, fed by ldmatrix from padded
//     shared memory with cp.async double buffering. One kernel
//     accumulates dK and dV per block of 64 keys, walking the query tiles
//     of every query head of the group (GQA sums in registers); a second
//     recomputes S and dP per block of 64 queries for dQ, so nothing is
//     added with atomics and the result is deterministic. P and dS are
//     rounded to T to enter the second products (FlashAttention-2 does
//     the same), so v2's error is a unit of T relative to the terms'
//     magnitudes where v1's is float32's.

import (
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/bwdk"
	"github.com/gokern/kern/ops/internal/bwdkv"
	"github.com/gokern/kern/ops/internal/bwdq"
)

var (
	bwdDeltaK = [2]*kern.Kernel{bwdk.DeltaF16Kernel.Kernel(), bwdk.DeltaBF16Kernel.Kernel()}
	bwdKVK    = [2]*kern.Kernel{bwdk.KVF16Kernel.Kernel(), bwdk.KVBF16Kernel.Kernel()}
	bwdQK     = [2]*kern.Kernel{bwdk.QF16Kernel.Kernel(), bwdk.QBF16Kernel.Kernel()}

	// v2, per element type (f16, bf16) and head dim (64, 128).
	bwdKV2 = [2][2]*kern.Kernel{
		{bwdkv.KVF16D64Kernel.Kernel(), bwdkv.KVF16D128Kernel.Kernel()},
		{bwdkv.KVBF16D64Kernel.Kernel(), bwdkv.KVBF16D128Kernel.Kernel()},
	}
	bwdQ2 = [2][2]*kern.Kernel{
		{bwdq.QF16D64Kernel.Kernel(), bwdq.QF16D128Kernel.Kernel()},
		{bwdq.QBF16D64Kernel.Kernel(), bwdq.QBF16D128Kernel.Kernel()},
	}
)

// AttentionGrads are the outputs of FlashAttentionBackward.
type AttentionGrads[T Half16] struct {
	DQ, DK, DV *kern.Buffer[T]
	// Delta is float32 scratch of [Heads, totalQ] (rowsum(dO∘O)).
	Delta *kern.Buffer[float32]
}

// FlashAttentionBackward computes dQ, dK and dV of FlashAttention (layout
// in flash.go) from its inputs q, k, v, its output o and lse, and the
// output gradient do. a.MaxSeqQ and a.MaxSeqK size v2's grids (0: the
// token totals).
func FlashAttentionBackward[T Half16](queue kern.Queue, g AttentionGrads[T], q, k, v, o, do *kern.Buffer[T], lse *kern.Buffer[float32], cuSeqQ, cuSeqK *kern.Buffer[int32], a Attention) error {
	return flashBackward(queue, g, q, k, v, o, do, lse, cuSeqQ, cuSeqK, a, a.HeadDim == 64 || a.HeadDim == 128)
}

// flashBackward is FlashAttentionBackward with the version chosen: v2
// (tensor cores) or v1; the tests run both.
func flashBackward[T Half16](queue kern.Queue, g AttentionGrads[T], q, k, v, o, do *kern.Buffer[T], lse *kern.Buffer[float32], cuSeqQ, cuSeqK *kern.Buffer[int32], a Attention, v2 bool) error {
	s := newShape("ops.FlashAttentionBackward")
	s.atLeast("KVHeads", a.KVHeads, 1)
	s.atLeast("Heads", a.Heads, 1)
	if s.err == nil && a.Heads%a.KVHeads != 0 {
		s.fail("Heads = %d is not a multiple of KVHeads = %d", a.Heads, a.KVHeads)
	}
	if a.HeadDim < 32 || a.HeadDim > 256 || a.HeadDim%32 != 0 {
		s.fail("HeadDim = %d, want a multiple of 32 up to 256", a.HeadDim)
	}
	s.atLeast("MaxSeqQ", a.MaxSeqQ, 0)
	s.atLeast("MaxSeqK", a.MaxSeqK, 0)
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
	if v2 {
		return bwdV2(s, queue, g, q, k, v, do, lse, cuSeqQ, cuSeqK, a, dt, totalQ, totalK)
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

// bwdV2 launches the tensor-core dK/dV and dQ kernels (after delta):
// grids (ceil(maxSeqK/64), kvHeads, batch) and (ceil(maxSeqQ/64), heads,
// batch) of 4 warps, SharedBytes of dynamic shared memory each.
func bwdV2[T Half16](s *shape, queue kern.Queue, g AttentionGrads[T], q, k, v, do *kern.Buffer[T], lse *kern.Buffer[float32], cuSeqQ, cuSeqK *kern.Buffer[int32], a Attention, dt, totalQ, totalK int) error {
	hd := a.HeadDim/64 - 1 // 64 → 0, 128 → 1
	batch := cuSeqQ.Len() - 1
	maxQ, maxK := a.MaxSeqQ, a.MaxSeqK
	if maxQ == 0 {
		maxQ = totalQ
	}
	if maxK == 0 {
		maxK = totalK
	}
	scale := a.scale()
	tail := []kern.Arg{bufArg(lse), bufArg(g.Delta), bufArg(cuSeqQ), bufArg(cuSeqK),
		intArg(a.Heads), intArg(a.KVHeads), f32Arg(scale * math.Log2E), f32Arg(scale), kern.ScalarArg(a.Causal)}
	block := gpu.Dim3{X: bwdkv.Warps * 32, Y: 1, Z: 1}
	smem := bwdkv.SharedBytes(a.HeadDim)
	if batch > 0 && maxK > 0 {
		grid := kern.Blocks(gpu.Dim3{X: (maxK + bwdkv.KVKeys - 1) / bwdkv.KVKeys, Y: a.KVHeads, Z: batch}, block).WithShared(smem)
		args := append([]kern.Arg{bufArg(g.DK), bufArg(g.DV), bufArg(q), bufArg(k), bufArg(v), bufArg(do)}, tail...)
		if err := s.launch(bwdKV2[dt][hd], queue, grid, args...); err != nil {
			return err
		}
	}
	if batch > 0 && maxQ > 0 {
		grid := kern.Blocks(gpu.Dim3{X: (maxQ + bwdq.QQueries - 1) / bwdq.QQueries, Y: a.Heads, Z: batch}, block).WithShared(bwdq.SharedBytes(a.HeadDim))
		args := append([]kern.Arg{bufArg(g.DQ), bufArg(q), bufArg(k), bufArg(v), bufArg(do)}, tail...)
		return s.launch(bwdQ2[dt][hd], queue, grid, args...)
	}
	return nil
}
