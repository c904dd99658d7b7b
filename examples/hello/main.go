// Command hello runs one kernel, FusedSiluGate, on the GPU if there is one
// and on kern's PTX emulator otherwise, and checks it against a float64
// reference.
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/gokern/kern"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
		os.Exit(1)
	}
}

func run() error {
	// The GPU if there is one; otherwise the emulator, which kern.Open
	// says on stderr (KERN_DEVICE=cuda requires a GPU).
	dev, err := kern.Open()
	if err != nil {
		return err
	}
	defer dev.Close()
	fmt.Println("device:", dev)

	const n = 100_000
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
	gate, err := kern.Upload(dev, gs)
	if err != nil {
		return err
	}
	out, err := kern.Alloc[float32](dev, n)
	if err != nil {
		return err
	}
	if err := FusedSiluGateKernel.Launch(dev, kern.Cover(n), x, gate, out); err != nil {
		return err
	}
	ys, err := out.Download()
	if err != nil {
		return err
	}

	// Check against float64, allowing 8 float32 ulps of the result.
	worst := 0.0
	for i, y := range ys {
		x := float64(xs[i])
		want := x / (1 + math.Exp(-x)) * float64(gs[i])
		tol := 1e-30 + 8*math.Abs(want)*0x1p-24
		if err := math.Abs(float64(y) - want); err > tol {
			return fmt.Errorf("out[%d] = %g, want %g (|err| %.3g > %.3g)", i, y, want, err, tol)
		} else if r := err / tol; r > worst {
			worst = r
		}
	}
	for i := range 4 {
		fmt.Printf("silu(%+.4f) * %+.4f = %+.6f\n", xs[i], gs[i], ys[i])
	}
	fmt.Printf("%d elements match the float64 reference (worst error %.0f%% of the 8-ulp tolerance)\n", n, 100*worst)
	return nil
}
