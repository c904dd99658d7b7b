// Command dequant_int8 quantizes a weight matrix on the host to int8 with
// a per-output-channel (per-row) absmax scale, expands it back to float32
// on the device, and checks the device result bit for bit against the
// float64 reference of the same formula. It also reports what the
// quantization itself costs: the error of the dequantized weights against
// the original ones.
package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gokern/kern"
	"github.com/gokern/kern/examples/internal/exampleutil"
)

func main() {
	exampleutil.Main("dequant_int8", func(dev *kern.Device) error {
		rows, cols := 4096, 4096
		if dev.Kind() != "cuda" {
			rows, cols = 512, 2048
		}
		return run(dev, rows, cols)
	})
}

// quantize returns w (rows×cols) as int8 and one scale per row: the row's
// largest magnitude maps to ±127, and each weight rounds to the nearest
// step.
func quantize(w []float32, rows, cols int) ([]int8, []float32) {
	q, scale := make([]int8, len(w)), make([]float32, rows)
	for r := range rows {
		absmax := float32(0)
		for _, v := range w[r*cols : (r+1)*cols] {
			absmax = max(absmax, float32(math.Abs(float64(v))))
		}
		scale[r] = absmax / 127
		if absmax == 0 {
			scale[r] = 1
		}
		for c := range cols {
			q[r*cols+c] = int8(math.Round(float64(w[r*cols+c] / scale[r])))
		}
	}
	return q, scale
}

func run(dev *kern.Device, rows, cols int) error {
	rng := rand.New(rand.NewPCG(7, 8))
	ws := make([]float32, rows*cols)
	for r := range rows {
		spread := 0.01 * (1 + float64(r%7)) // channels of different ranges
		for c := range cols {
			ws[r*cols+c] = float32(rng.NormFloat64() * spread)
		}
	}
	qs, scales := quantize(ws, rows, cols)

	q, err := kern.Upload(dev, qs)
	if err != nil {
		return err
	}
	defer q.Free()
	scale, err := kern.Upload(dev, scales)
	if err != nil {
		return err
	}
	defer scale.Free()
	out, err := kern.Alloc[float32](dev, rows*cols)
	if err != nil {
		return err
	}
	defer out.Free()
	if err := DequantInt8Kernel.Launch(dev, kern.Cover2(cols, rows), q, scale, out, cols); err != nil {
		return err
	}
	ys, err := out.Download()
	if err != nil {
		return err
	}

	// The device result must equal the float64 product rounded to float32:
	// the product is exact in float64 (8 + 24 significant bits), so both
	// round the same real number once.
	var quantErr, rel float64
	for i, y := range ys {
		r := i / cols
		want := float32(float64(qs[i]) * float64(scales[r]))
		if y != want {
			return fmt.Errorf("out[%d][%d] = %g, want %g (q=%d, scale=%g)", r, i%cols, y, want, qs[i], scales[r])
		}
		d := math.Abs(float64(y) - float64(ws[i]))
		quantErr = max(quantErr, d)
		rel = max(rel, d/float64(scales[r]))
	}
	fmt.Printf("dequantized %d×%d int8 weights with per-row scales (%.1f MB in, %.1f MB out)\n",
		rows, cols, float64(rows*(cols+4))/1e6, float64(4*rows*cols)/1e6)
	fmt.Printf("row 0: q[0..3] = %v, scale %.6g -> %.6g\n", qs[:4], scales[0], ys[:4])
	fmt.Printf("all %d outputs equal float32(q·scale) exactly (tolerance 0)\n", rows*cols)
	fmt.Printf("quantization error vs the original weights: max %.3g, at most %.3f of a step (0.5 expected)\n", quantErr, rel)
	return nil
}
