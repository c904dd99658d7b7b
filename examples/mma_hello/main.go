// Command mma_hello multiplies one 16×16 by 16×8 tile on the tensor cores
// (gpu.MMAF16, mma.sync m16n8k16): once with each lane loading its
// fragments from global memory, once through shared memory with ldmatrix.
// It prints D and checks it exactly against float64.
package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/gokern/kern"
	"github.com/gokern/kern/examples/internal/exampleutil"
	"github.com/gokern/kern/gpu"
)

func main() {
	exampleutil.Main("mma_hello", func(dev *kern.Device) error { return run(dev, true) })
}

// inputs returns A (16×16) and B (16×8), row-major, of small integers:
// every product is at most 4·4 = 16 and every sum of 16 of them at most
// 256 in magnitude, all exact in f16 inputs and the f32 accumulator in
// any order of addition. So the check is exact: tolerance 0. They are
// random, so that a lane reading the wrong element shows.
func inputs() (a, b []float32) {
	rng := rand.New(rand.NewPCG(17, 18))
	a, b = make([]float32, 16*16), make([]float32, 16*8)
	for i := range a {
		a[i] = float32(rng.IntN(9) - 4) // -4..4
	}
	for i := range b {
		b[i] = float32(rng.IntN(9) - 4)
	}
	return a, b
}

func toHalf(xs []float32) []gpu.Half {
	h := make([]gpu.Half, len(xs))
	for i, x := range xs {
		h[i] = gpu.ToHalf(x)
	}
	return h
}

// run computes D both ways on dev and checks it; verbose prints D.
func run(dev *kern.Device, verbose bool) error {
	af, bf := inputs()
	var want [16 * 8]float64
	for i := range 16 {
		for j := range 8 {
			for k := range 16 {
				want[i*8+j] += float64(af[i*16+k]) * float64(bf[k*8+j])
			}
		}
	}
	a, err := kern.Upload(dev, toHalf(af))
	if err != nil {
		return err
	}
	defer a.Free()
	b, err := kern.Upload(dev, toHalf(bf))
	if err != nil {
		return err
	}
	defer b.Free()

	type version struct {
		name   string
		launch func(q kern.Queue, grid kern.Grid, a, b *kern.Buffer[gpu.Half], d *kern.Buffer[float32]) error
	}
	var d0 []float32
	for _, v := range []version{
		{"MMAFromGlobal (fragments loaded from global memory)", MMAFromGlobalKernel.Launch},
		{"MMAFromShared (ldmatrix.x4 for A, ldmatrix.x2.trans for B)", MMAFromSharedKernel.Launch},
	} {
		d, err := kern.Alloc[float32](dev, 16*8)
		if err != nil {
			return err
		}
		if err := v.launch(dev, kern.Blocks(gpu.Dim3{X: 1}, gpu.Dim3{X: 32}), a, b, d); err != nil {
			return err
		}
		got, err := d.Download()
		d.Free()
		if err != nil {
			return err
		}
		for i, g := range got {
			if float64(g) != want[i] {
				return fmt.Errorf("%s: D[%d][%d] = %v, want %v", v.name, i/8, i%8, g, want[i])
			}
		}
		if verbose {
			fmt.Printf("%s: D = A·B matches float64 exactly\n", v.name)
		}
		d0 = got
	}
	if verbose {
		fmt.Println("D (16×8):")
		for i := range 16 {
			for j := range 8 {
				fmt.Printf("%6.0f", d0[i*8+j])
			}
			fmt.Println()
		}
	}
	return nil
}
