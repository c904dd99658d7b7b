// Command grid_sync runs many steps of the 1-D heat equation two ways: one
// kernel launch per step, and one cooperative launch whose blocks meet at
// gpu.GridSync between steps (a persistent kernel: launched once, with as
// many blocks as the device holds at once). Both give the same bits; the
// example checks them against a float64 run of the same steps and, on a
// GPU, times the two.
package main

import (
	"fmt"
	"math"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/examples/internal/exampleutil"
	"github.com/gokern/kern/gpu"
)

func main() {
	exampleutil.Main("grid_sync", func(dev *kern.Device) error {
		n, steps := 1<<20, 2000
		if dev.Kind() != "cuda" {
			n, steps = 1<<12, 100
		}
		return run(dev, n, steps)
	})
}

const (
	threads = 256
	alpha   = 0.25 // stable for α ≤ 1/2: each step is a convex combination
)

func run(dev *kern.Device, n, steps int) error {
	u0 := make([]float32, n)
	for i := range u0 {
		x := float64(i) / float64(n-1)
		u0[i] = float32(math.Sin(math.Pi*x) + 0.5*math.Exp(-2000*(x-0.3)*(x-0.3)))
	}
	u0[0], u0[n-1] = 0, 0

	// The reference: the same steps in float64.
	ref := make([]float64, n)
	for i, v := range u0 {
		ref[i] = float64(v)
	}
	next := make([]float64, n)
	for s := 0; s < steps; s++ {
		next[0], next[n-1] = ref[0], ref[n-1]
		for i := 1; i < n-1; i++ {
			next[i] = ref[i] + alpha*(ref[i-1]-2*ref[i]+ref[i+1])
		}
		ref, next = next, ref
	}

	// One launch per step.
	a, err := kern.Upload(dev, u0)
	if err != nil {
		return err
	}
	defer a.Free()
	b, err := kern.Alloc[float32](dev, n)
	if err != nil {
		return err
	}
	defer b.Free()
	start := time.Now()
	src, dst := a, b
	for s := 0; s < steps; s++ {
		if err := HeatStepKernel.Launch(dev, kern.Cover(n), src, dst, alpha); err != nil {
			return err
		}
		src, dst = dst, src
	}
	stepped, err := src.Download() // waits for the last step
	if err != nil {
		return err
	}
	perStep := time.Since(start)

	// One cooperative launch.
	u, err := kern.Upload(dev, u0)
	if err != nil {
		return err
	}
	defer u.Free()
	v, err := kern.Alloc[float32](dev, n)
	if err != nil {
		return err
	}
	defer v.Free()
	block := gpu.Dim3{X: threads, Y: 1, Z: 1}
	blocks, err := HeatStepsKernel.Kernel().MaxCooperativeBlocks(dev, block, 0)
	if err != nil {
		return err
	}
	blocks = min(blocks, (n+threads-1)/threads)
	start = time.Now()
	if err := HeatStepsKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: blocks, Y: 1, Z: 1}, block), u, v, alpha, steps); err != nil {
		return err
	}
	out := u
	if steps%2 == 1 {
		out = v
	}
	persistent, err := out.Download()
	if err != nil {
		return err
	}
	once := time.Since(start)

	// Each step rounds a cell's update about five times, to within 2^-24
	// of values no larger than max|u0| (the scheme never leaves the range
	// of its data), and does not amplify earlier errors.
	peak := 0.0
	for _, x := range u0 {
		peak = math.Max(peak, math.Abs(float64(x)))
	}
	tol := float64(steps) * 6 * 0x1p-24 * peak
	maxErr := 0.0
	for i := range persistent {
		if math.Float32bits(persistent[i]) != math.Float32bits(stepped[i]) {
			return fmt.Errorf("cell %d: %g with GridSync, %g with a launch per step: want the same bits", i, persistent[i], stepped[i])
		}
		maxErr = math.Max(maxErr, math.Abs(float64(persistent[i])-ref[i]))
	}
	if maxErr > tol {
		return fmt.Errorf("max |error| against float64 %.3g > bound %.3g", maxErr, tol)
	}
	fmt.Printf("heat equation, %d cells, %d steps (α = %g)\n", n, steps, alpha)
	fmt.Printf("  one launch per step:           %d launches\n", steps)
	fmt.Printf("  one launch, gpu.GridSync:      %d blocks × %d threads, %d grid barriers\n", blocks, threads, steps)
	fmt.Printf("  same bits; max |error| against float64 %.3g (bound %.3g)\n", maxErr, tol)
	if dev.Kind() == "cuda" {
		fmt.Printf("  time: %v per step launched, %v with GridSync (%.2f µs a step)\n",
			perStep/time.Duration(steps), once/time.Duration(steps), float64(once.Microseconds())/float64(steps))
	}
	return nil
}
