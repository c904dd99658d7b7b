package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// TestMatmulRMSNorm checks Matmul with RMSNorm set, on the emulator and in
// native mode, for both input types and both output types, at M = 1, 3
// and 8 (the fused GEMV's limit) and 11 (past it: unfused), ragged N (not
// a multiple of the GEMV's 16 rows) and K (a multiple of 8 but not of
// 32, the GEMV's chunk; one past the norm's 4096-element register pass;
// and one not a multiple of 8, which only the unfused v1 takes):
//
//   - bit-exact: the result equals the unfused pair's (FuseNormOff: the
//     norm's kernel into a, then the GEMV on a), the claim of
//     matmul_norm.go, and the fused launch leaves a untouched;
//   - the normalised rows the unfused path writes into a match a float64
//     RMSNorm within one rounding to In (2^-8 bf16, 2^-11 f16) plus
//     float32 summation (2^-20 relative);
//   - c matches a float64 product of those rows (exact products, the
//     float32 sum's K·2^-24·Σ|a·w|, then one rounding to O);
//   - with KernelGEMV, each row of c is bit-identical to that row
//     multiplied alone (batch invariance); KernelAuto at M = 1 fuses
//     too, KernelTiles (M = 5) never does.
func TestMatmulRMSNorm(t *testing.T) {
	type shape struct {
		m, n, k int
		act     Activation
		kernel  MatmulKernel
	}
	shapes := []shape{
		{1, 37, 776, ActNone, KernelGEMV}, {3, 38, 776, ActSwiGLU, KernelGEMV}, {8, 37, 776, ActNone, KernelGEMV},
		{8, 50, 4104, ActSwiGLU, KernelGEMV}, {1, 16, 40, ActSiLU, KernelAuto}, {11, 37, 776, ActNone, KernelGEMV},
		{3, 21, 100, ActNone, KernelGEMV}, {5, 40, 776, ActSwiGLU, KernelTiles},
	}
	defer func(n int) { FuseNormMaxRows = n }(FuseNormMaxRows)
	FuseNormMaxRows = 8 // the kernel's every row count, not only the default's
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		for _, s := range shapes {
			name := fmt.Sprintf("m%d_n%d_k%d_act%d_kernel%d", s.m, s.n, s.k, s.act, s.kernel)
			t.Run(name+"/bf16-f32", func(t *testing.T) { testMatmulRMSNorm[gpu.BFloat16, float32](t, dev, s.m, s.n, s.k, s.act, s.kernel) })
			t.Run(name+"/bf16-bf16", func(t *testing.T) {
				testMatmulRMSNorm[gpu.BFloat16, gpu.BFloat16](t, dev, s.m, s.n, s.k, s.act, s.kernel)
			})
			t.Run(name+"/f16-f32", func(t *testing.T) { testMatmulRMSNorm[gpu.Half, float32](t, dev, s.m, s.n, s.k, s.act, s.kernel) })
			t.Run(name+"/f16-f16", func(t *testing.T) { testMatmulRMSNorm[gpu.Half, gpu.Half](t, dev, s.m, s.n, s.k, s.act, s.kernel) })
		}
		// A norm input of the wrong size is an error naming it.
		const m, n, k = 2, 16, 64
		a, c := alloc[gpu.BFloat16](t, dev, m*k), alloc[float32](t, dev, m*n)
		b, x, g := alloc[gpu.BFloat16](t, dev, n*k), alloc[float32](t, dev, m*k-1), alloc[float32](t, dev, k)
		err := Matmul(dev, c, a, b, m, n, k, MatmulOpts[float32]{RMSNorm: &MatmulRMSNorm{X: x, Weight: g}})
		wantErr(t, "short RMSNorm.X", err, "RMSNorm.X", "127")
	})
}

func testMatmulRMSNorm[In Half16, O Float](t *testing.T, dev *kern.Device, m, n, k int, act Activation, kernel MatmulKernel) {
	rng := rand.New(rand.NewPCG(uint64(m*1000+n), uint64(k)))
	const eps = 1e-6
	x, xw := upload[float32](t, dev, randn(rng, m*k, 2))
	g, gw := upload[float32](t, dev, uniformVals(rng, k, 0.5, 1.5))
	b, bw := uploadIn[In](t, dev, randn(rng, n*k, 1/math.Sqrt(float64(k)))) // sums of order 1: no float16 overflow
	cn := n
	if act == ActSwiGLU {
		cn = n / 2
	}
	var bias, res *kern.Buffer[O]
	var biasw, resw []float64
	if act != ActSwiGLU {
		bias, biasw = upload[O](t, dev, randn(rng, n, 0.5))
	}
	res, resw = upload[O](t, dev, randn(rng, m*cn, 1))
	fused := MatmulFusesNorm(m, k, WeightNK, kernel)
	if want := m <= 8 && k%8 == 0 && kernel != KernelTiles; fused != want {
		t.Fatalf("MatmulFusesNorm(%d, %d) = %v, want %v", m, k, fused, want)
	}
	// sentinel fills a: the fused launch must leave it so.
	sentinel := make([]In, m*k)
	for i := range sentinel {
		sentinel[i] = fromF32[In](-7.25)
	}
	run := func(off bool) ([]float64, []In) {
		t.Helper()
		a, err := kern.Upload(dev, sentinel)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Free()
		c := alloc[O](t, dev, m*cn)
		FuseNormOff = off
		defer func() { FuseNormOff = false }()
		o := MatmulOpts[O]{Bias: bias, Residual: res, Act: act, Kernel: kernel, StaticWeights: true,
			RMSNorm: &MatmulRMSNorm{X: x, Weight: g, Eps: eps}}
		if err := Matmul(dev, c, a, b, m, n, k, o); err != nil {
			t.Fatal(err)
		}
		as, err := a.Download()
		if err != nil {
			t.Fatal(err)
		}
		return download(t, c), as
	}
	got, aFused := run(false)
	ref, aNorm := run(true)
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(ref[i]) {
			t.Fatalf("c[%d] = %g fused, %g unfused: not the same bits", i, got[i], ref[i])
		}
	}
	if fused {
		for i := range aFused {
			if aFused[i] != sentinel[i] {
				t.Fatalf("the fused GEMV wrote a[%d]", i)
			}
		}
	}
	if kernel == KernelGEMV && m > 1 {
		// Batch invariance (MatmulKernel): each row of c as that row of
		// x gives alone.
		for r := range m {
			x1, _ := upload[float32](t, dev, xw[r*k:(r+1)*k])
			res1, _ := upload[O](t, dev, resw[r*cn:(r+1)*cn])
			a1 := alloc[In](t, dev, k)
			c1 := alloc[O](t, dev, cn)
			o := MatmulOpts[O]{Bias: bias, Residual: res1, Act: act, Kernel: kernel, StaticWeights: true,
				RMSNorm: &MatmulRMSNorm{X: x1, Weight: g, Eps: eps}}
			if err := Matmul(dev, c1, a1, b, 1, n, k, o); err != nil {
				t.Fatal(err)
			}
			for j, v := range download(t, c1) {
				if math.Float64bits(v) != math.Float64bits(got[r*cn+j]) {
					t.Fatalf("row %d of %d, c[%d] = %g, alone %g: not batch-invariant", r, m, j, got[r*cn+j], v)
				}
			}
		}
	}
	// The normalised rows against float64.
	an := wide(aNorm)
	want := make([]float64, m*k)
	for r := range m {
		ss := 0.0
		for j := range k {
			ss += xw[r*k+j] * xw[r*k+j]
		}
		rs := 1 / math.Sqrt(ss/float64(k)+eps)
		for j := range k {
			want[r*k+j] = xw[r*k+j] * rs * gw[j]
		}
	}
	compare(t, "a = RMSNorm(x)", an, want, tol{abs: tiny[In](), rel: unit[In]() + 0x1p-20}, nil)
	// c against a float64 product of the normalised rows.
	wantC := make([]float64, m*cn)
	scale := make([]float64, m*cn)
	for r := range m {
		dot := func(j int) (float64, float64) {
			s, sa := 0.0, 0.0
			for i := range k {
				p := an[r*k+i] * bw[j*k+i]
				s, sa = s+p, sa+math.Abs(p)
			}
			return s, sa
		}
		for j := range cn {
			var v, sa float64
			switch act {
			case ActSwiGLU:
				gt, ga := dot(2 * j)
				up, ua := dot(2*j + 1)
				v, sa = gt/(1+math.Exp(-gt))*up, ga*math.Abs(up)+ua*math.Abs(gt)
			default:
				v, sa = dot(j)
				v += biasw[j]
				if act == ActSiLU {
					v = v / (1 + math.Exp(-v))
				}
			}
			wantC[r*cn+j], scale[r*cn+j] = v+resw[r*cn+j], sa
		}
	}
	compare(t, "c", got, wantC, tol{abs: tiny[O](), rel: unit[O]() + 0x1p-20, srel: float64(k) * 0x1p-24}, scale)
}
