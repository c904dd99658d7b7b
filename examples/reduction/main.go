// Command reduction sums a long float32 vector in two passes — many
// blocks each reducing with warp shuffles and a shared-memory block stage,
// then one block adding the block sums — and compares the result with a
// compensated (Kahan) float64 sum and with a plain float32 loop.
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
	exampleutil.Main("reduction", func(dev *kern.Device) error {
		n := 1 << 26
		if dev.Kind() != "cuda" {
			n = 1 << 21
		}
		return run(dev, n, 256)
	})
}

const threads = 256

// kahan returns the sum of xs in float64 with Kahan's compensation: an
// error of about 2^-53·Σ|x|, independent of len(xs).
func kahan(xs []float32) float64 {
	var sum, c float64
	for _, x := range xs {
		y := float64(x) - c
		t := sum + y
		c = (t - sum) - y
		sum = t
	}
	return sum
}

// run sums n numbers on dev with a first pass of the given number of
// blocks (at most 1024: the second pass is one block of 256 threads,
// each taking up to 4 block sums).
func run(dev *kern.Device, n, blocks int) error {
	rng := rand.New(rand.NewPCG(13, 14))
	xs := make([]float32, n)
	abs := 0.0
	for i := range xs {
		xs[i] = float32(rng.Float64()*2 - 0.5) // mostly positive: the sum grows like n
		abs += math.Abs(float64(xs[i]))
	}
	x, err := kern.Upload(dev, xs)
	if err != nil {
		return err
	}
	defer x.Free()
	partial, err := kern.Alloc[float32](dev, blocks)
	if err != nil {
		return err
	}
	defer partial.Free()
	total, err := kern.Alloc[float32](dev, 1)
	if err != nil {
		return err
	}
	defer total.Free()

	if err := SumPartialKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: blocks}, gpu.Dim3{X: threads}), x, partial); err != nil {
		return err
	}
	if err := SumPartialKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 1}, gpu.Dim3{X: threads}), partial, total); err != nil {
		return err
	}
	got, err := total.Download()
	if err != nil {
		return err
	}

	want := kahan(xs)
	var seq float32 // what a plain loop gets
	for _, v := range xs {
		seq += v
	}
	// Error bound: each addition rounds with a relative error of at most
	// 2^-24 and a number passes through at most `depth` additions: its
	// thread's loop, 5 shuffle steps, 5 WarpSum steps; then the same in
	// the second pass. So |err| ≤ depth·2^-24·Σ|x| (to first order).
	depth := (n+blocks*threads-1)/(blocks*threads) + 10 + (blocks+threads-1)/threads + 10
	tol := float64(depth) * 0x1p-24 * abs
	d := math.Abs(float64(got[0]) - want)
	if d > tol {
		return fmt.Errorf("sum = %.9g, want %.9g (|err| %.3g > %.3g)", got[0], want, d, tol)
	}
	fmt.Printf("sum of %d float32 in [-0.5, 1.5) on %d blocks × %d threads, then 1 block\n", n, blocks, threads)
	fmt.Printf("  kern:                %.9g  relative error %.2g\n", got[0], d/math.Abs(want))
	fmt.Printf("  float64 Kahan:       %.9g\n", want)
	fmt.Printf("  float32 plain loop:  %.9g  relative error %.2g\n", seq, math.Abs(float64(seq)-want)/math.Abs(want))
	fmt.Printf("within the bound depth·2^-24·Σ|x| (depth %d) at %.1f%% of it: the tree keeps each number's\n"+
		"path short, where the plain loop's running total passes through %d additions.\n", depth, 100*d/tol, n)
	return nil
}
