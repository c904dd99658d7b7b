// Command tiled_matmul_f32 multiplies float32 matrices of any shape with
// two shared-memory tiled kernels, checks every element against a float64
// reference, and reports each kernel's speed in GFLOP/s.
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/examples/internal/exampleutil"
	"github.com/gokern/kern/gpu"
)

func main() {
	exampleutil.Main("tiled_matmul_f32", func(dev *kern.Device) error {
		m, n, k := 4096, 4096, 4096
		if dev.Kind() != "cuda" {
			m, n, k = 200, 150, 100 // not multiples of 16 or 32: edge tiles
		}
		return run(dev, m, n, k)
	})
}

type version struct {
	name   string
	launch func(q kern.Queue, grid kern.Grid, a, b, c *kern.Buffer[float32], m, n, k int) error
	tile   gpu.Dim3 // C elements per block
	block  gpu.Dim3
}

var versions = []version{
	{"MatMul16", MatMul16Kernel.Launch, gpu.Dim3{X: 16, Y: 16}, gpu.Dim3{X: 16, Y: 16}},
	{"MatMul32", MatMul32Kernel.Launch, gpu.Dim3{X: 32, Y: 32}, gpu.Dim3{X: 32, Y: 8}},
}

func (v version) grid(m, n int) kern.Grid {
	// Z: 1 so that m = 0 launches nothing (a zero Y before it would
	// otherwise be the shorthand for 1).
	return kern.Blocks(gpu.Dim3{X: (n + v.tile.X - 1) / v.tile.X, Y: (m + v.tile.Y - 1) / v.tile.Y, Z: 1}, v.block)
}

// reference returns A·B in float64. On a large problem it checks only
// every stride-th row, to keep the host's share of the run short.
func reference(as, bs []float32, m, n, k, stride int) [][]float64 {
	ref := make([][]float64, m)
	for i := 0; i < m; i += stride {
		ref[i] = make([]float64, n)
		for p := range k {
			a := float64(as[i*k+p])
			for j, b := range bs[p*n : (p+1)*n] {
				ref[i][j] += a * float64(b)
			}
		}
	}
	return ref
}

func run(dev *kern.Device, m, n, k int) error {
	rng := rand.New(rand.NewPCG(15, 16))
	// Inputs in [0, 1): every product is positive, so no dot product
	// cancels and relative error is a fair measure.
	as, bs := make([]float32, m*k), make([]float32, k*n)
	for i := range as {
		as[i] = rng.Float32()
	}
	for i := range bs {
		bs[i] = rng.Float32()
	}
	a, err := kern.Upload(dev, as)
	if err != nil {
		return err
	}
	defer a.Free()
	b, err := kern.Upload(dev, bs)
	if err != nil {
		return err
	}
	defer b.Free()
	c, err := kern.Alloc[float32](dev, m*n)
	if err != nil {
		return err
	}
	defer c.Free()

	stride := max(1, m*n*k/(1<<28)) // check all rows unless that is >2^28 FMAs
	ref := reference(as, bs, m, n, k, stride)
	// A dot product of k positive terms accumulated in float32 with FMA
	// has a relative error of at most about k·2^-24.
	tol := float64(k) * 0x1p-24
	flops := 2 * float64(m) * float64(n) * float64(k)
	fmt.Printf("C = A·B with A %d×%d, B %d×%d (float32, inputs in [0, 1))\n", m, k, k, n)
	for _, v := range versions {
		g := v.grid(m, n)
		start := time.Now()
		if err := v.launch(dev, g, a, b, c, m, n, k); err != nil {
			return err
		}
		sec := time.Since(start).Seconds() // on a GPU, replaced by the timing below
		cs, err := c.Download()
		if err != nil {
			return err
		}
		worst := 0.0
		for i := 0; i < m; i += stride {
			for j := range n {
				rel := math.Abs(float64(cs[i*n+j])-ref[i][j]) / ref[i][j]
				if !(rel <= tol) {
					return fmt.Errorf("%s: C[%d][%d] = %g, want %g (relative error %.3g > %.3g)", v.name, i, j, cs[i*n+j], ref[i][j], rel, tol)
				}
				worst = max(worst, rel)
			}
		}

		if dev.Kind() == "cuda" {
			if sec, err = timeLaunches(dev, func() error { return v.launch(dev, g, a, b, c, m, n, k) }); err != nil {
				return err
			}
		}
		fmt.Printf("  %-9s max relative error %.2g (tolerance k·2^-24 = %.2g)  %9.3f GFLOP/s\n", v.name, worst, tol, flops/sec/1e9)
	}
	if dev.Kind() != "cuda" {
		fmt.Printf("GFLOP/s above measure the %s on this CPU, not a GPU (which is some six orders of magnitude faster).\n", dev.Name())
	}
	return nil
}

// timeLaunches returns the mean seconds of 10 runs of launch on a GPU,
// after the launch already made has loaded the module and warmed up.
func timeLaunches(dev *kern.Device, launch func() error) (float64, error) {
	const reps = 10
	if err := dev.Sync(); err != nil {
		return 0, err
	}
	start := time.Now()
	for range reps {
		if err := launch(); err != nil {
			return 0, err
		}
	}
	if err := dev.Sync(); err != nil {
		return 0, err
	}
	return time.Since(start).Seconds() / reps, nil
}
