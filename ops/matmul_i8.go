package ops

// MatmulInt8: the W8A8 GEMM, int8 activations (a scale per row) times
// int8 weights (a scale per output channel) on mma.sync m16n8k32 s8 with
// exact int32 sums, scaled once in float32 at the store (kernels and their
// layout in internal/i8):
//
//	c[i,j] = aScales[i] · wScales[j] · Σ_k a[i,k]·w[j,k]
//
// Shapes (row-major): a [M, K] int8, aScales [M], w [N, K] int8 (as
// QuantizeInt8Rows makes it from a weight), wScales [N], c [M, N] of T.
// Versions: v1 only (a warp per 16×8 tile, fragments from global memory).

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/ops/internal/i8"
)

// MatmulInt8 computes c = diag(aScales)·(a·wᵀ)·diag(wScales) in int32,
// then float32, rounded once to T. Any m, n, k ≥ 0 (k < 133 000 keeps the
// int32 sums exact).
func MatmulInt8[T Float](q kern.Queue, c *kern.Buffer[T], a *kern.Buffer[int8], aScales *kern.Buffer[float32], w *kern.Buffer[int8], wScales *kern.Buffer[float32], m, n, k int) error {
	s := newShape("ops.MatmulInt8")
	s.atLeast("m", m, 0)
	s.atLeast("n", n, 0)
	s.atLeast("k", k, 0)
	buf(s, "a", a, s.mul(m, k), fmt.Sprintf("m×k = %d×%d", m, k))
	buf(s, "aScales", aScales, m, "m")
	buf(s, "w", w, s.mul(n, k), fmt.Sprintf("n×k = %d×%d", n, k))
	buf(s, "wScales", wScales, n, "n")
	buf(s, "c", c, s.mul(m, n), fmt.Sprintf("m×n = %d×%d", m, n))
	if s.err != nil || m == 0 || n == 0 {
		return s.err
	}
	tiles := ceilDiv(m, 16) * ceilDiv(n, 8)
	return s.launch(i8.Kernels[dtypeIndex[T]()], q, blocks1(ceilDiv(tiles, i8.Warps), i8.Warps*32),
		bufArg(c), bufArg(a), bufArg(aScales), bufArg(w), bufArg(wScales), intArg(m), intArg(n), intArg(k))
}
