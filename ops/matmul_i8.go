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
// Versions (internal/i8's headers have the layouts):
//
//   - v1: a warp per 16×8 tile, fragments from global memory; any shape.
//   - v2: 128×128 tiles, a three-stage cp.async pipeline, ldmatrix from
//     XOR-swizzled shared memory; K a multiple of 16.
//   - gemv: the decode GEMV (internal/i8gemv), four rows of W per warp
//     streamed with 128-bit cp.async; M ≤ 16, K a multiple of 16.
//
// MatmulInt8 takes v2 when K is a multiple of 16 and M > int8V1MaxM, the
// GEMV when K is a multiple of 16 and M ≤ int8V1MaxM, v1 otherwise.

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/i8"
	"github.com/gokern/kern/ops/internal/i8gemv"
)

// int8V1MaxM is the largest M v1 takes when v2 could: a 128-row tile
// would be mostly padding.
const int8V1MaxM = 16

// The versions of MatmulInt8, for its tests.
const (
	i8Auto = iota
	i8V1
	i8V2
	i8GEMV
)

// MatmulInt8 computes c = diag(aScales)·(a·wᵀ)·diag(wScales) in int32,
// then float32, rounded once to T. Any m, n, k ≥ 0 (k < 133 000 keeps the
// int32 sums exact).
func MatmulInt8[T Float](q kern.Queue, c *kern.Buffer[T], a *kern.Buffer[int8], aScales *kern.Buffer[float32], w *kern.Buffer[int8], wScales *kern.Buffer[float32], m, n, k int) error {
	return matmulInt8(i8Auto, q, c, a, aScales, w, wScales, m, n, k)
}

func matmulInt8[T Float](v int, q kern.Queue, c *kern.Buffer[T], a *kern.Buffer[int8], aScales *kern.Buffer[float32], w *kern.Buffer[int8], wScales *kern.Buffer[float32], m, n, k int) error {
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
	if v == i8V2 && k%i8.TCKAlign != 0 {
		s.fail("k = %d: v2 needs a multiple of %d", k, i8.TCKAlign)
		return s.err
	}
	if v == i8GEMV && (k%i8gemv.KAlign != 0 || m > i8gemv.MaxM) {
		s.fail("m = %d, k = %d: the GEMV needs m ≤ %d and k a multiple of %d", m, k, i8gemv.MaxM, i8gemv.KAlign)
		return s.err
	}
	args := []kern.Arg{bufArg(c), bufArg(a), bufArg(aScales), bufArg(w), bufArg(wScales), intArg(m), intArg(n), intArg(k)}
	if v == i8Auto {
		v = int8Pick(m, k)
	}
	if v == i8V2 {
		grid := kern.Blocks(gpu.Dim3{X: ceilDiv(n, i8.TCBN), Y: ceilDiv(m, i8.TCBM), Z: 1}, gpu.Dim3{X: i8.TCThreads, Y: 1, Z: 1})
		return s.launch(i8.TCKernels[dtypeIndex[T]()], q, grid.WithShared(i8.TCShared), args...)
	}
	if v == i8GEMV {
		grid := blocks1(ceilDiv(n, i8gemv.RowsPerBlock), i8gemv.Warps*32)
		return s.launch(i8gemv.Kernels[dtypeIndex[T]()], q, grid.WithShared(i8gemv.Shared), args...)
	}
	tiles := ceilDiv(m, 16) * ceilDiv(n, 8)
	return s.launch(i8.Kernels[dtypeIndex[T]()], q, blocks1(ceilDiv(tiles, i8.Warps), i8.Warps*32), args...)
}
