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

// TestDotKWarps checks DotK against float64 with 5 warps (B's copy slots
// taken by some threads only), 4 (the shape of ops/internal/tilemm) and 3
// (element copies), at ragged M and N and at K that is a
// multiple of 8 but not of BK = 32 (cp.async chunks, a zero-filled K
// edge), below one BK, and odd (element copies). f16 products are exact
// in float32; the float32 sums of k of them err by ≤ k·2⁻²⁴·Σ|a·w| in
// any order: the tolerance is 4·(k+8)·2⁻²⁴·Σ|a·w|.
func TestDotKWarps(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, sh := range []struct{ m, n, k int }{{200, 130, 72}, {33, 64, 8}, {161, 70, 31}} {
		a, w := make([]gpu.Half, sh.m*sh.k), make([]gpu.Half, sh.n*sh.k)
		for i := range a {
			a[i] = gpu.ToHalf(float32(rng.NormFloat64()))
		}
		for i := range w {
			w[i] = gpu.ToHalf(float32(rng.NormFloat64()))
		}
		for _, d := range devices() {
			for _, warps := range []int{5, 4, 3} {
				c := must(kern.Alloc[float32](d.dev, sh.m*sh.n))
				grid := gpu.Dim3{X: (sh.n + 63) / 64, Y: (sh.m + 32*warps - 1) / (32 * warps), Z: 1}
				err := DotKWarpsKernel.Launch(d.dev, kern.Blocks(grid, gpu.Dim3{X: 32 * warps, Y: 1, Z: 1}), c,
					must(kern.Upload(d.dev, a)), must(kern.Upload(d.dev, w)), sh.m, sh.n, sh.k)
				if err != nil {
					t.Fatalf("%s, %v, %d warps: %v", d.name, sh, warps, err)
				}
				got := must(c.Download())
				for i := range sh.m {
					for j := range sh.n {
						var want, mag float64
						for p := range sh.k {
							x := float64(a[i*sh.k+p].Float32()) * float64(w[j*sh.k+p].Float32())
							want, mag = want+x, mag+math.Abs(x)
						}
						if e := math.Abs(float64(got[i*sh.n+j]) - want); !(e <= 4*float64(sh.k+8)*0x1p-24*mag) {
							t.Fatalf("%s, %v, %d warps: c[%d][%d] = %v, want %v", d.name, sh, warps, i, j, got[i*sh.n+j], want)
						}
					}
				}
			}
		}
	}
}
