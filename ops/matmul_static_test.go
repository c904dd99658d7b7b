package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// TestMatmulStaticWeights: the decode GEMV with StaticWeights loads its
// first iteration's weights before it waits for the kernels before it
// (gpu.WaitPriorGrids); its results are the float64 reference's, and bit
// for bit those without the option, at K with no whole iteration, one,
// and several plus a tail (an iteration is 1024 columns).
func TestMatmulStaticWeights(t *testing.T) {
	const n = 40
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		rng := rand.New(rand.NewPCG(3, 5))
		for _, c := range []struct{ m, k int }{{1, 1024}, {9, 1024}, {3, 2056}, {1, 3080}, {16, 520}} {
			a, aw := uploadIn[gpu.BFloat16](t, dev, randn(rng, c.m*c.k, 1))
			b, bw := uploadIn[gpu.BFloat16](t, dev, randn(rng, n*c.k, 0.1))
			res, resw := upload[float32](t, dev, randn(rng, c.m*n, 1))
			want, scale := refMatmul(aw, bw, nil, resw, c.m, n, c.k, WeightNK, ActNone)
			var outs [2][]float32
			for i, static := range []bool{false, true} {
				out := alloc[float32](t, dev, c.m*n)
				o := MatmulOpts[float32]{Residual: res, Kernel: KernelGEMV, StaticWeights: static}
				if err := Matmul(dev, out, a, b, c.m, n, c.k, o); err != nil {
					t.Fatal(err)
				}
				got, err := out.Download()
				if err != nil {
					t.Fatal(err)
				}
				outs[i] = got
			}
			got64 := make([]float64, len(outs[1]))
			for i, v := range outs[1] {
				got64[i] = float64(v)
				if v != outs[0][i] {
					t.Fatalf("m=%d k=%d: out[%d] = %v with StaticWeights, %v without", c.m, c.k, i, v, outs[0][i])
				}
			}
			compare(t, "out", got64, want, matmulTol[float32](c.k), scale)
		}
	})
}
