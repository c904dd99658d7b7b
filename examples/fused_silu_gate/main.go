// Command fused_silu_gate computes silu(x)·gate over a long vector with
// one fused kernel (one read of x and gate, one write of out; no
// intermediate silu(x) in memory) and reports the largest error against a
// float64 reference in float32 ulps.
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
	exampleutil.Main("fused_silu_gate", func(dev *kern.Device) error {
		n := 1 << 24
		if dev.Kind() != "cuda" {
			n = 1 << 20 // the emulator runs about a million elements a second
		}
		return run(dev, n)
	})
}

// tolULP is the allowed error in float32 ulps of the exact result:
// gpu.Exp is within 2 ulp, and the add, divide and multiply each round
// once (half an ulp each, plus what the exp error becomes after them).
const tolULP = 4

// blocks is the grid the grid-stride loop runs on: enough blocks to fill
// any current GPU several times over, few enough that each thread loops.
const blocks = 1024

func run(dev *kern.Device, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	xs, gs := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i] = float32(rng.NormFloat64() * 4)
		gs[i] = float32(rng.NormFloat64())
	}
	x, err := kern.Upload(dev, xs)
	if err != nil {
		return err
	}
	defer x.Free()
	gate, err := kern.Upload(dev, gs)
	if err != nil {
		return err
	}
	defer gate.Free()
	out, err := kern.Alloc[float32](dev, n)
	if err != nil {
		return err
	}
	defer out.Free()

	grid := kern.Blocks(gpu.Dim3{X: min(blocks, (n+255)/256)}, gpu.Dim3{X: 256})
	if err := SiluGateKernel.Launch(dev, grid, x, gate, out); err != nil {
		return err
	}
	ys, err := out.Download()
	if err != nil {
		return err
	}

	worst, at := 0.0, 0
	for i, y := range ys {
		xi := float64(xs[i])
		want := xi / (1 + math.Exp(-xi)) * float64(gs[i])
		e := math.Abs(float64(y)-want) / ulp(want)
		if e > tolULP {
			return fmt.Errorf("out[%d] = %g, want %g: %.2f ulp, over the %d-ulp tolerance", i, y, want, e, tolULP)
		}
		if e > worst {
			worst, at = e, i
		}
	}
	fmt.Printf("silu(x)·gate over %d elements (%.0f MB moved: 2 reads + 1 write of float32)\n", n, 12*float64(n)/1e6)
	fmt.Printf("max error %.2f ulp at i=%d: silu(%+.4f)·%+.4f = %+.8g (float64 %+.8g); tolerance %d ulp\n",
		worst, at, xs[at], gs[at], ys[at], float64(xs[at])/(1+math.Exp(-float64(xs[at])))*float64(gs[at]), tolULP)
	return nil
}

// ulp is the spacing of float32 values at |v|: the unit the error of a
// float32 result is measured in. Below the normal range it is the
// smallest subnormal spacing, 2^-149.
func ulp(v float64) float64 {
	f := float32(math.Abs(v))
	if f < math.SmallestNonzeroFloat32*(1<<23) {
		return math.SmallestNonzeroFloat32
	}
	return float64(math.Nextafter32(f, math.MaxFloat32) - f)
}
