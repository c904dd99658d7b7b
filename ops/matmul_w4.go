package ops

// MatmulInt4: W4A16, 16-bit activations times int4 weights in
// QuantizeInt4's group-128 format, dequantized in registers as the
// weights stream in:
//
//	c[i,j] = Σ_g scales[j,g] · Σ_{k in g} (nibble(j,k) - 8) · x[i,k]
//
// Shapes (row-major): x [M, K] In, packed [N, K/2] uint8, scales
// [N, ceil(K/128)] float32, c [M, N] O ∈ {float32, In}. K must be a
// multiple of 32. Versions, each with its layout and block shape in its
// package's header:
//
//   - GEMV v1 (internal/w4, w4.go): a warp per four rows of W, four rows
//     of x per pass over the weights, packed f16x2/bf16x2 arithmetic.
//   - GEMV v2 (internal/w4, tc.go): mma.sync with W as A and xᵀ as B, 16
//     rows of W per block split over K between 4 warps, 8 rows of x per
//     pass; float32 sums for both input types, 0.20 SASS instructions
//     per weight byte against v1's 0.38 (f16) and 0.52 (bf16)
//     (docs/performance.md).
//   - GEMM (internal/w4mm): 64×128 tiles on mma.sync m16n8k16, the
//     nibbles dequantized straight into the B fragments, a three-stage
//     cp.async pipeline; for prefill.
//
// MatmulInt4 takes GEMV v2 for M ≤ int4GEMVMaxM (v1 when K has more
// than w4.TCMaxGroups groups) and the GEMM above.

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/w4"
	"github.com/gokern/kern/ops/internal/w4mm"
)

// int4GEMVMaxM is the largest M the GEMV takes: up to 16 rows of x it
// reads the weights at most four times (four rows per pass), which
// stays bandwidth-bound; past that the tensor cores win.
const int4GEMVMaxM = 16

// The versions of MatmulInt4, for its tests.
const (
	w4Auto = iota
	w4GEMV
	w4GEMVTC
	w4GEMM
)

// MatmulInt4 computes c = x·Wᵀ for int4 weights W given as packed and
// scales (QuantizeInt4's output for W [N, K]).
func MatmulInt4[In Half16, O Float](q kern.Queue, c *kern.Buffer[O], x *kern.Buffer[In], packed *kern.Buffer[uint8], scales *kern.Buffer[float32], m, n, k int) error {
	return matmulInt4(w4Auto, q, c, x, packed, scales, m, n, k)
}

func matmulInt4[In Half16, O Float](v int, q kern.Queue, c *kern.Buffer[O], x *kern.Buffer[In], packed *kern.Buffer[uint8], scales *kern.Buffer[float32], m, n, k int) error {
	s := newShape("ops.MatmulInt4")
	s.atLeast("m", m, 0)
	s.atLeast("n", n, 0)
	s.atLeast("k", k, 0)
	if k%w4.Chunk != 0 {
		s.fail("k = %d, want a multiple of %d (16-byte rows of packed weights)", k, w4.Chunk)
	}
	buf(s, "x", x, s.mul(m, k), fmt.Sprintf("m×k = %d×%d", m, k))
	buf(s, "packed", packed, s.mul(n, k)/2, fmt.Sprintf("n×k/2 = %d×%d", n, k/2))
	groups := (k + w4.Group - 1) / w4.Group
	buf(s, "scales", scales, s.mul(n, groups), fmt.Sprintf("n×ceil(k/%d) = %d×%d", w4.Group, n, groups))
	buf(s, "c", c, s.mul(m, n), fmt.Sprintf("m×n = %d×%d", m, n))
	oi := dtypeIndex[O]()
	if oi != 0 && oi != 1+inIndex[In]() {
		s.fail("%s inputs with %s output: the output must be float32 or %s", dtypeName[In](), dtypeName[O](), dtypeName[In]())
	}
	if s.err != nil || m == 0 || n == 0 {
		return s.err
	}
	args := []kern.Arg{bufArg(c), bufArg(x), bufArg(packed), bufArg(scales), intArg(m), intArg(n), intArg(k)}
	if v == w4Auto {
		v = int4Pick(m, k)
	}
	if v == w4GEMM {
		grid := kern.Blocks(gpu.Dim3{X: ceilDiv(n, w4mm.BN), Y: ceilDiv(m, w4mm.BM), Z: 1}, gpu.Dim3{X: w4mm.Threads, Y: 1, Z: 1})
		return s.launch(w4mm.Kernels[inIndex[In]()][min(oi, 1)], q, grid.WithShared(w4mm.Shared), args...)
	}
	if v == w4GEMVTC {
		if groups > w4.TCMaxGroups {
			s.fail("k = %d: GEMV v2 takes at most %d groups of %d", k, w4.TCMaxGroups, w4.Group)
			return s.err
		}
		grid := blocks1(ceilDiv(n, w4.TCRows), w4.TCThreads).WithShared(w4.TCShared(m, k))
		return s.launch(w4.TCKernels[inIndex[In]()][min(oi, 1)], q, grid, args...)
	}
	grid := blocks1(ceilDiv(n, w4.RowsPerBlock), w4.Warps*32).WithShared(w4.Shared)
	return s.launch(w4.Kernels[inIndex[In]()][min(oi, 1)], q, grid, args...)
}
