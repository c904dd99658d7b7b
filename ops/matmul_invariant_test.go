package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// TestMatmulBatchInvariant: with KernelGEMV or KernelTiles, every row of c
// is bit-identical to that row multiplied alone and to that row inside
// another batch, at row counts on both sides of the GEMV's 16-row blocks
// and the tiles' 64 and 128 rows, and with either v2 tile config; and the
// many-row GEMV matches the float64 reference.
func TestMatmulBatchInvariant(t *testing.T) {
	const n, k = 48, 104
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		rng := rand.New(rand.NewPCG(7, 11))
		const rows = 70
		a64 := randn(rng, rows*k, 1)
		b64 := randn(rng, n*k, 0.2)
		bias64 := randn(rng, n, 0.5)
		_, aw := uploadIn[gpu.BFloat16](t, dev, a64)
		b, bw := uploadIn[gpu.BFloat16](t, dev, b64)
		bias, biasw := upload[float32](t, dev, bias64)
		// mul multiplies the given rows of a as one batch.
		mul := func(kind MatmulKernel, cfg *tcConfig, sel []int) [][]float32 {
			t.Helper()
			xs := make([]float64, 0, len(sel)*k)
			for _, r := range sel {
				xs = append(xs, aw[r*k:(r+1)*k]...)
			}
			a, _ := uploadIn[gpu.BFloat16](t, dev, xs)
			c := alloc[float32](t, dev, len(sel)*n)
			o := MatmulOpts[float32]{Bias: bias, Act: ActSiLU, Kernel: kind}
			var err error
			if cfg == nil {
				err = Matmul(dev, c, a, b, len(sel), n, k, o)
			} else {
				err = matmulRun(newShape("test"), mmV2, *cfg, dev, c, a, b, len(sel), n, k, o)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Download()
			if err != nil {
				t.Fatal(err)
			}
			out := make([][]float32, len(sel))
			for i := range sel {
				out[i] = got[i*n : (i+1)*n]
			}
			return out
		}
		span := func(lo, hi int) []int {
			var s []int
			for r := lo; r < hi; r++ {
				s = append(s, r)
			}
			return s
		}
		shuffled := rng.Perm(rows)
		for _, c := range []struct {
			name    string
			kind    MatmulKernel
			cfgs    []*tcConfig
			batches [][]int
		}{
			{"gemv", KernelGEMV, []*tcConfig{nil}, [][]int{span(0, 37), span(0, 8), span(3, 19), shuffled[:40]}},
			{"tiles", KernelTiles, []*tcConfig{nil, &matmulConfigs[0], &matmulConfigs[1]}, [][]int{span(0, rows), span(5, 9), shuffled[:66]}},
		} {
			t.Run(c.name, func(t *testing.T) {
				alone := map[int][]float32{}
				for _, cfg := range c.cfgs {
					for _, sel := range c.batches {
						got := mul(c.kind, cfg, sel)
						for i, r := range sel {
							if alone[r] == nil {
								alone[r] = mul(c.kind, nil, []int{r})[0]
							}
							for j := range n {
								if got[i][j] != alone[r][j] {
									t.Fatalf("row %d in a batch of %d (config %v): c[%d] = %g, alone %g", r, len(sel), cfg, j, got[i][j], alone[r][j])
								}
							}
						}
					}
				}
			})
		}
		// The GEMV over three blocks of rows, against float64.
		sel := span(0, 37)
		got := mul(KernelGEMV, nil, sel)
		want, scale := refMatmul(aw[:37*k], bw, biasw, nil, 37, n, k, WeightNK, ActSiLU)
		flat := make([]float64, 0, 37*n)
		for _, row := range got {
			for _, v := range row {
				flat = append(flat, float64(v))
			}
		}
		compare(t, "gemv of 37 rows", flat, want, matmulTol[float32](k), scale)
	})
}

func TestMatmulKernelErrors(t *testing.T) {
	dev := testDevices[0].dev
	a := alloc[gpu.BFloat16](t, dev, 8)
	c := alloc[float32](t, dev, 1)
	err := Matmul(dev, c, a, a, 1, 1, 8, MatmulOpts[float32]{Kernel: 7})
	wantErr(t, "kernel family 7", err, "ops.Matmul", "unknown kernel family 7")
}
