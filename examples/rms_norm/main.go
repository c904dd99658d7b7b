// Command rms_norm runs RMSNorm, the normalisation of Llama-style
// transformers, over a batch of rows with one block per row, and checks it
// against a float64 reference.
package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gokern/kern"
	"github.com/gokern/kern/examples/internal/exampleutil"
	"github.com/gokern/kern/gpu"
)

func main() {
	exampleutil.Main("rms_norm", func(dev *kern.Device) error {
		rows := 4096
		if dev.Kind() != "cuda" {
			rows = 128
		}
		return run(dev, rows, 4096) // 4096: Llama-7B's hidden size
	})
}

const eps = 1e-5

// tolerance is relative: float32 sums of squares lose about
// (cols/256 + 8) half-ulps (a strided sum of cols/256 terms per thread,
// then a tree of 8 levels), gpu.Rsqrt is within 2 ulp, and the two
// products round once each. 2^-19 (32 ulp) covers rows of 8192.
const tolerance = 0x1p-19

func run(dev *kern.Device, rows, cols int) error {
	rng := rand.New(rand.NewPCG(3, 4))
	xs := make([]float32, rows*cols)
	for i := range xs {
		xs[i] = float32(rng.NormFloat64() * 3)
	}
	ws := make([]float32, cols)
	for j := range ws {
		ws[j] = float32(1 + 0.1*rng.NormFloat64())
	}
	x, err := kern.Upload(dev, xs)
	if err != nil {
		return err
	}
	defer x.Free()
	w, err := kern.Upload(dev, ws)
	if err != nil {
		return err
	}
	defer w.Free()
	out, err := kern.Alloc[float32](dev, rows*cols)
	if err != nil {
		return err
	}
	defer out.Free()

	grid := kern.Blocks(gpu.Dim3{X: rows}, gpu.Dim3{X: 256})
	if err := RMSNormKernel.Launch(dev, grid, x, w, out, cols, float32(eps)); err != nil {
		return err
	}
	ys, err := out.Download()
	if err != nil {
		return err
	}

	worst := 0.0
	for r := range rows {
		ss := 0.0
		for _, v := range xs[r*cols : (r+1)*cols] {
			ss += float64(v) * float64(v)
		}
		scale := 1 / math.Sqrt(ss/float64(cols)+eps)
		for j := range cols {
			i := r*cols + j
			want := float64(xs[i]) * scale * float64(ws[j])
			tol := 1e-30 + tolerance*math.Abs(want)
			d := math.Abs(float64(ys[i]) - want)
			if d > tol {
				return fmt.Errorf("out[%d][%d] = %g, want %g (|err| %.3g > %.3g)", r, j, ys[i], want, d, tol)
			}
			worst = max(worst, d/tol)
		}
	}
	fmt.Printf("RMSNorm of %d rows × %d columns, one 256-thread block per row\n", rows, cols)
	fmt.Printf("row 0: x[0..3] = %.4f -> out[0..3] = %.4f\n", xs[:4], ys[:4])
	fmt.Printf("all %d outputs match float64 within a relative 2^-19; worst error %.1f%% of that tolerance\n", rows*cols, 100*worst)
	return nil
}
