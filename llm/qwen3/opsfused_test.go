package qwen3

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// TestRMSNormCast checks rmsNormCast against a float64 RMSNorm rounded
// once to bf16, on both sides of its register path's 4096 columns (the
// loop past it) and at ragged widths, on the emulator and in native mode.
// Tolerance: one bf16 rounding (2^-8 relative) plus float32 summation.
func TestRMSNormCast(t *testing.T) {
	for _, d := range testDevices {
		for _, cols := range []int{1, 37, 256, 1000, 4096, 4097, 5000} {
			t.Run(fmt.Sprintf("%s/cols=%d", d.name, cols), func(t *testing.T) {
				const rows = 3
				rng := rand.New(rand.NewPCG(uint64(cols), 3))
				x := make([]float32, rows*cols)
				w := make([]float32, cols)
				for i := range x {
					x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(i%5-2)))
				}
				for i := range w {
					w[i] = float32(1 + 0.5*rng.NormFloat64())
				}
				xb, err := kern.Upload(d.dev, x)
				if err != nil {
					t.Fatal(err)
				}
				defer xb.Free()
				wb, _ := kern.Upload(d.dev, w)
				defer wb.Free()
				out, _ := kern.Alloc[gpu.BFloat16](d.dev, rows*cols)
				defer out.Free()
				const eps = 1e-6
				if err := rmsNormCastLaunch(d.dev, out, xb, wb, rows, cols, eps); err != nil {
					t.Fatal(err)
				}
				got, _ := out.Download()
				for r := range rows {
					ss := 0.0
					for j := range cols {
						v := float64(x[r*cols+j])
						ss += v * v
					}
					rs := 1 / math.Sqrt(ss/float64(cols)+eps)
					for j := range cols {
						want := float64(x[r*cols+j]) * rs * float64(w[j])
						g := float64(got[r*cols+j].Float32())
						if math.Abs(g-want) > 0x1p-8*math.Abs(want)+1e-6*rs*math.Abs(float64(w[j])) {
							t.Fatalf("row %d col %d: %g, want %g", r, j, g, want)
						}
					}
				}
			})
		}
	}
}
