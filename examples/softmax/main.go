// Command softmax runs a row-wise softmax (max-subtract, gpu.BlockMax,
// then gpu.BlockSum) over a batch of rows with one block per row, and
// checks it against a float64 reference.
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
	exampleutil.Main("softmax", func(dev *kern.Device) error {
		rows := 4096
		if dev.Kind() != "cuda" {
			rows = 128
		}
		return run(dev, rows, 2048)
	})
}

// tolerance is relative to each output: gpu.Exp is within 2 ulp; x - m
// rounds with an absolute error of up to |x - m|·2^-24, which exp turns
// into a relative error of that size (2^-20 for logits spread over ±8);
// the float32 sum loses about (cols/256 + 8) half-ulps; the division and
// the product round once. 2^-18 (64 ulp) covers rows of 8192.
const tolerance = 0x1p-18

func run(dev *kern.Device, rows, cols int) error {
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([]float32, rows*cols)
	for i := range xs {
		// Logits around a large offset: without the max subtraction,
		// exp(x) would overflow float32 (exp(89) > MaxFloat32).
		xs[i] = float32(100 + rng.NormFloat64()*2)
	}
	x, err := kern.Upload(dev, xs)
	if err != nil {
		return err
	}
	defer x.Free()
	out, err := kern.Alloc[float32](dev, rows*cols)
	if err != nil {
		return err
	}
	defer out.Free()

	grid := kern.Blocks(gpu.Dim3{X: rows}, gpu.Dim3{X: 256})
	if err := SoftmaxKernel.Launch(dev, grid, x, out, cols); err != nil {
		return err
	}
	ys, err := out.Download()
	if err != nil {
		return err
	}

	worst, worstSum := 0.0, 0.0
	for r := range rows {
		row := xs[r*cols : (r+1)*cols]
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, float64(v))
		}
		den := 0.0
		for _, v := range row {
			den += math.Exp(float64(v) - m)
		}
		total := 0.0
		for j, v := range row {
			want := math.Exp(float64(v)-m) / den
			got := float64(ys[r*cols+j])
			tol := 1e-38 + tolerance*want
			d := math.Abs(got - want)
			if d > tol {
				return fmt.Errorf("out[%d][%d] = %g, want %g (|err| %.3g > %.3g)", r, j, got, want, d, tol)
			}
			worst = max(worst, d/tol)
			total += got
		}
		worstSum = max(worstSum, math.Abs(total-1))
	}
	fmt.Printf("softmax of %d rows × %d logits (logits ≈ 100 ± 2: exp(x) alone would overflow float32)\n", rows, cols)
	fmt.Printf("row 0: max p = %.6g, min p = %.6g\n", maxOf(ys[:cols]), minOf(ys[:cols]))
	fmt.Printf("all %d outputs match float64 within a relative 2^-18; worst error %.1f%% of that tolerance\n", rows*cols, 100*worst)
	fmt.Printf("every row sums to 1 within %.2g\n", worstSum)
	return nil
}

func maxOf(xs []float32) float32 {
	m := xs[0]
	for _, v := range xs {
		m = max(m, v)
	}
	return m
}

func minOf(xs []float32) float32 {
	m := xs[0]
	for _, v := range xs {
		m = min(m, v)
	}
	return m
}
