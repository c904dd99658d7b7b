package ops

// Matmul with the RMSNorm of its input fused in (MatmulOpts.RMSNorm):
//
//	a[i,k] = In(x[i,k] · rstd_i · weight[k]),  rstd_i = 1/√(mean_k x[i,k]² + eps)
//	c      = act(a·b + bias) + residual      (Matmul on that a)
//
// A transformer normalises its float32 residual stream into the 16-bit
// input of the projection after it; in a decode step that norm is a
// launch of its own, which on an H100 costs more than its work
// (docs/performance-gpu.md). With RMSNorm set, the decode GEMV for up
// to FuseNormMaxRows rows (internal/gemvnorm; the kernel takes 8)
// normalises the rows itself, each block redundantly, and a is not
// touched. Every other path — more rows, the tiles,
// the GEMV's v1 and v3, K not a multiple of 8 — first writes the
// normalised rows into a with one kernel (gemvnorm's normCast) and then
// multiplies as Matmul does; the result is the same bits either way
// (both norms sum in one order, internal/gemvnorm/norm.go), so fusing is
// an implementation choice, never a numerical one. That order is also the
// Qwen3 engine's rmsNormCast's.
//
// The sum of squares and the scale are float32, x·rstd·weight rounded
// once to In (ops.RMSNorm's convention, rounded to In).

import (
	"fmt"
	"os"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/gemvnorm"
)

// MatmulRMSNorm is the RMSNorm a Matmul applies to its input rows: a is
// then computed from X (see MatmulOpts.RMSNorm).
type MatmulRMSNorm struct {
	X      *kern.Buffer[float32] // [m, k] the rows before the norm
	Weight *kern.Buffer[float32] // [k]
	Eps    float32
}

// FuseNormOff, when set, makes every Matmul with RMSNorm take the
// unfused path (normCast into a, then the product), so that a GPU run can
// time the two side by side; KERN_FUSE_NORM=0 in the environment sets it
// at start. The results are the same bits. Set it only while no Matmul
// runs on another goroutine.
var FuseNormOff = os.Getenv("KERN_FUSE_NORM") == "0"

// FuseNormMaxRows is the most rows a Matmul fuses its RMSNorm for; the
// kernel takes up to 8. Measured on an H100 (docs/performance-gpu.md,
// 2026-11-28), a Qwen3-4B decode step of 8 sequences took 9.44 ms with
// the norm fused at M = 8 against 7.88 ms with it a launch of its own (the
// block scales its 8 rows one after another before the first product);
// one sequence was within the runs' noise either way (0.6B 1% faster,
// 4B 2% slower). Tests raise it to reach the kernel's multi-row path; set
// it only while no Matmul runs on another goroutine.
var FuseNormMaxRows = 1

// maxFusedShared bounds the fused GEMV's dynamic shared memory (8.25 KiB
// plus m·Stride(K)·2 bytes of normalised rows). Up to about 50 KiB three
// blocks fit an SM of an A100 (164 KiB) as of an H100 (228 KiB), as the
// registers allow: Qwen3 up to 4B (K ≤ 2560) at any M ≤ 8. 8B (K = 4096)
// and 14B (K = 5120) at M = 8 take 73 and 89 KiB, two blocks an SM on an
// H100 and one on an A100; past 96 KiB Matmul runs unfused.
const maxFusedShared = 96 << 10

// MatmulFusesNorm reports whether a Matmul of an m×n×k product with
// RMSNorm set and opts' layout and kernel family runs the norm inside the
// GEMV (one launch) rather than before it (two). The output is the same.
func MatmulFusesNorm(m, k int, layout BLayout, kernel MatmulKernel) bool {
	v := mmV2
	switch {
	case k%8 != 0:
		v = mmV1
	case kernel == KernelGEMV && layout == WeightNK:
		v = mmGEMV
	case kernel == KernelAuto && m <= 16 && layout == WeightNK:
		v = gemvVersion()
	}
	return fusesNorm(v, m, k)
}

func fusesNorm(v, m, k int) bool {
	return v == mmGEMV && !FuseNormOff && m <= FuseNormMaxRows && m <= gemvnorm.MaxM && gemvnorm.SharedBytes(m, k) <= maxFusedShared
}

// normCheck checks RMSNorm's buffers against m×k.
func normCheck(s *shape, r *MatmulRMSNorm, m, k int) {
	buf(s, "RMSNorm.X", r.X, s.mul(m, k), fmt.Sprintf("m×k = %d×%d", m, k))
	buf(s, "RMSNorm.Weight", r.Weight, k, "k")
}

// matmulNormFused launches the fused GEMV (fusesNorm holds, arguments
// checked).
func matmulNormFused[In Half16, O Float](s *shape, q kern.Queue, c *kern.Buffer[O], b *kern.Buffer[In], m, n, k int, o MatmulOpts[O]) error {
	ii, oi := inIndex[In](), min(dtypeIndex[O](), 1)
	bias, res, err := optionalBufs(s, q, o.Bias, o.Residual)
	if err != nil {
		return err
	}
	r := o.RMSNorm
	grid := kern.Blocks(gpu.Dim3{X: ceilDiv(n, gemvnorm.Rows), Y: 1, Z: 1},
		gpu.Dim3{X: gemvnorm.Threads, Y: 1, Z: 1}).WithShared(gemvnorm.SharedBytes(m, k))
	return s.launch(gemvnorm.Kernels[ii][oi], q, grid, bufArg(c), r.X, r.Weight, bufArg(b), bias, res,
		intArg(m), intArg(n), intArg(k), intArg(int(o.Act)), intArg(gemvnorm.Stride(k)), kern.ScalarArg(r.Eps), kern.ScalarArg(o.StaticWeights))
}

// matmulNormCast writes the normalised rows of o.RMSNorm.X into a: the
// unfused path's first launch.
func matmulNormCast[In Half16](s *shape, q kern.Queue, a *kern.Buffer[In], r *MatmulRMSNorm, m, k int) error {
	grid := kern.Blocks(gpu.Dim3{X: m, Y: 1, Z: 1}, gpu.Dim3{X: gemvnorm.Threads, Y: 1, Z: 1}).WithShared(gemvnorm.NormCastShared)
	return s.launch(gemvnorm.NormCast[inIndex[In]()], q, grid, bufArg(a), r.X, r.Weight, intArg(k), kern.ScalarArg(r.Eps))
}
