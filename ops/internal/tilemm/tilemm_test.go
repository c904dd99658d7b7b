package tilemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the package's PTX for sm_80 and sm_90 and
// requires every kernel to compile without register spills.
func TestPTXAssembles(t *testing.T) {
	ptxas.CheckModule(t, "tilemm", kernModule.PTX)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// shapes are ragged in M, N and K (K not a multiple of 8 takes Stage's
// element path, a multiple of 8 its cp.async path), exact, and tiny.
var shapes = []struct{ m, n, k int }{
	{1, 1, 1}, {37, 70, 50}, {BM, BN, 64}, {BM + 3, 2*BN + 1, 72}, {5, 9, 7},
}

func silu(v float64) float64 { return v / (1 + math.Exp(-v)) }

// TestMatmul checks C = silu(A·Wᵀ + bias) against float64 on the
// emulator and in native mode, for f16 and bf16 operands. The products
// of 16-bit inputs are exact in float32; the float32 sums of k of them
// err by ≤ k·2⁻²⁴·Σ|a·w| (the tensor cores' order is not Go's), and silu
// adds a few ulp: the tolerance is 4·(k+8)·2⁻²⁴·(Σ|a·w| + |bias|) + 1e-6·|c|.
func TestMatmul(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, dev := range []struct {
		name string
		d    *kern.Device
	}{{"emu", kern.OpenEmulator()}, {"native", kern.OpenNative()}} {
		for _, bf := range []bool{false, true} {
			for _, sh := range shapes {
				t.Run(fmt.Sprintf("%s/bf16=%v/%dx%dx%d", dev.name, bf, sh.m, sh.n, sh.k), func(t *testing.T) {
					testMatmul(t, dev.d, rng, bf, sh.m, sh.n, sh.k)
				})
			}
		}
	}
}

func testMatmul(t *testing.T, d *kern.Device, rng *rand.Rand, bf bool, m, n, k int) {
	a, w := make([]float64, m*k), make([]float64, n*k)
	ah, wh := make([]gpu.Half, m*k), make([]gpu.Half, n*k)
	ab, wb := make([]gpu.BFloat16, m*k), make([]gpu.BFloat16, n*k)
	round := func(v float64, i int, h []gpu.Half, b []gpu.BFloat16) float64 {
		if bf {
			b[i] = gpu.ToBFloat16(float32(v))
			return float64(b[i].Float32())
		}
		h[i] = gpu.ToHalf(float32(v))
		return float64(h[i].Float32())
	}
	for i := range a {
		a[i] = round(rng.NormFloat64(), i, ah, ab)
	}
	for i := range w {
		w[i] = round(rng.NormFloat64()/math.Sqrt(float64(k)), i, wh, wb)
	}
	bias := make([]float32, n)
	for i := range bias {
		bias[i] = float32(rng.NormFloat64())
	}
	c := must(kern.Alloc[float32](d, m*n))
	grid := kern.Blocks(gpu.Dim3{X: (n + BN - 1) / BN, Y: (m + BM - 1) / BM, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1})
	var err error
	if bf {
		err = MatmulBF16Kernel.Launch(d, grid, c, must(kern.Upload(d, ab)), must(kern.Upload(d, wb)), must(kern.Upload(d, bias)), m, n, k)
	} else {
		err = MatmulF16Kernel.Launch(d, grid, c, must(kern.Upload(d, ah)), must(kern.Upload(d, wh)), must(kern.Upload(d, bias)), m, n, k)
	}
	if err != nil {
		t.Fatal(err)
	}
	got := must(c.Download())
	bad := 0
	for i := range m {
		for j := range n {
			s, mag := float64(bias[j]), math.Abs(float64(bias[j]))
			for p := range k {
				s += a[i*k+p] * w[j*k+p]
				mag += math.Abs(a[i*k+p] * w[j*k+p])
			}
			want := silu(s)
			tol := 4*float64(k+8)*0x1p-24*mag + 1e-6*math.Abs(want)
			if e := math.Abs(float64(got[i*n+j]) - want); !(e <= tol) {
				t.Errorf("c[%d][%d] = %g, want %g (error %.3g, allowed %.3g)", i, j, got[i*n+j], want, e, tol)
				if bad++; bad == 10 {
					t.FailNow()
				}
			}
		}
	}
}
