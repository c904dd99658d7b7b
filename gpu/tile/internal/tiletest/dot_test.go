package tiletest

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// TestDotOperandTooSmall: with 2 warps DotRows is a·wᵀ (float64
// reference; f16 products are exact in float32, and a sum of 32 of them
// of magnitude ≤ 1 rounds by at most 32·2⁻²⁴); with 4 warps its A operand
// is half what Dot reads, and the launch must fail with a device error on
// the emulator (an error in native mode), not read past the operand.
func TestDotOperandTooSmall(t *testing.T) {
	const rows, k = 64, 32
	rng := rand.New(rand.NewPCG(9, 10))
	a, w := make([]gpu.Half, rows*k), make([]gpu.Half, rows*k)
	for i := range a {
		a[i], w[i] = gpu.ToHalf(float32(rng.Float64()*2-1)), gpu.ToHalf(float32(rng.Float64()*2-1))
	}
	want := make([]float64, rows*rows)
	for i := range rows {
		for j := range rows {
			for kk := range k {
				want[i*rows+j] += float64(a[i*k+kk].Float32()) * float64(w[j*k+kk].Float32())
			}
		}
	}
	for _, d := range devices() {
		da, dw := must(kern.Upload(d.dev, a)), must(kern.Upload(d.dev, w))
		c := must(kern.Alloc[float32](d.dev, rows*rows))
		one := gpu.Dim3{X: 1, Y: 1, Z: 1}
		if err := DotRowsKernel.Launch(d.dev, kern.Blocks(one, gpu.Dim3{X: 64, Y: 1, Z: 1}), c, da, dw); err != nil {
			t.Fatalf("%s, 2 warps: %v", d.name, err)
		}
		got := must(c.Download())
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 32*0x1p-24 {
				t.Fatalf("%s: c[%d] = %v, want %v", d.name, i, got[i], want[i])
			}
		}
		err := DotRowsKernel.Launch(d.dev, kern.Blocks(one, gpu.Dim3{X: 128, Y: 1, Z: 1}), c, da, dw)
		if err == nil {
			err = d.dev.Sync()
		}
		var de *kern.DeviceError
		switch {
		case err == nil:
			t.Errorf("%s, 4 warps: no error, want one for Dot's A operand of 64 rows", d.name)
		case d.name == "emu" && !errors.As(err, &de):
			t.Errorf("%s, 4 warps: %v, want a *kern.DeviceError", d.name, err)
		default:
			t.Logf("%s, 4 warps: %v", d.name, err)
		}
	}
}
