// Command unpack_6bit is the template for a custom quantized format: it
// packs weights on the host as 6-bit values (four in three bytes) with a
// float32 scale per group of 32, unpacks them on the device, and checks
// the result bit for bit against a Go reference of the same format. The
// layout is drawn in kernels.go.
package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gokern/kern"
	"github.com/gokern/kern/examples/internal/exampleutil"
)

func main() {
	exampleutil.Main("unpack_6bit", func(dev *kern.Device) error {
		n := 1 << 24
		if dev.Kind() != "cuda" {
			n = 1 << 20
		}
		return run(dev, n)
	})
}

// quantize rounds w to 6-bit values with a scale per group of 32: the
// group's largest magnitude maps to ±31. len(w) must be a multiple of 32.
func quantize(w []float32) (q []int8, scale []float32) {
	q, scale = make([]int8, len(w)), make([]float32, len(w)/groupSize)
	for g := range scale {
		absmax := float32(0)
		for _, v := range w[g*groupSize : (g+1)*groupSize] {
			absmax = max(absmax, float32(math.Abs(float64(v))))
		}
		scale[g] = absmax / 31
		if absmax == 0 {
			scale[g] = 1
		}
		for i := g * groupSize; i < (g+1)*groupSize; i++ {
			q[i] = int8(max(-32, min(31, math.Round(float64(w[i]/scale[g])))))
		}
	}
	return q, scale
}

// pack6 packs values in -32..31 four to three bytes, as drawn in
// kernels.go. len(q) must be a multiple of 4.
func pack6(q []int8) []uint8 {
	out := make([]uint8, 0, len(q)/4*3)
	for i := 0; i < len(q); i += 4 {
		var w uint32
		for k := range 4 {
			w |= uint32(q[i+k]) & 0x3f << (6 * k)
		}
		out = append(out, uint8(w), uint8(w>>8), uint8(w>>16))
	}
	return out
}

func run(dev *kern.Device, n int) error {
	n = (n + groupSize - 1) / groupSize * groupSize // pad to whole groups
	rng := rand.New(rand.NewPCG(9, 10))
	ws := make([]float32, n)
	for i := range ws {
		ws[i] = float32(rng.NormFloat64() * 0.02)
	}
	qs, scales := quantize(ws)
	bytes := pack6(qs)

	packed, err := kern.Upload(dev, bytes)
	if err != nil {
		return err
	}
	defer packed.Free()
	scale, err := kern.Upload(dev, scales)
	if err != nil {
		return err
	}
	defer scale.Free()
	out, err := kern.Alloc[float32](dev, n)
	if err != nil {
		return err
	}
	defer out.Free()
	if err := Unpack6Kernel.Launch(dev, kern.Cover(n/4), packed, scale, out); err != nil {
		return err
	}
	ys, err := out.Download()
	if err != nil {
		return err
	}

	// Each output must be exactly float32(q·scale): the float64 product
	// of a 6-bit integer and a float32 is exact, so both round once.
	worst := 0.0
	for i, y := range ys {
		s := scales[i/groupSize]
		want := float32(float64(qs[i]) * float64(s))
		if y != want {
			return fmt.Errorf("out[%d] = %g, want %g (q=%d, scale=%g, bytes % x)", i, y, want, qs[i], s, bytes[i/4*3:i/4*3+3])
		}
		worst = max(worst, math.Abs(float64(y)-float64(ws[i]))/float64(s))
	}
	fmt.Printf("unpacked %d 6-bit values: %d bytes of codes + %d of scales = %.3f bits a value\n",
		n, len(bytes), 4*len(scales), 8*float64(len(bytes)+4*len(scales))/float64(n))
	fmt.Printf("first word: bytes % x -> q = %v -> %.5f\n", bytes[:3], qs[:4], ys[:4])
	fmt.Printf("all %d outputs equal float32(q·scale) exactly (tolerance 0); quantization error ≤ %.3f of a step\n", n, worst)
	return nil
}
