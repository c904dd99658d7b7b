package conformance

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

func mmaInputs(m, n, k int, seed uint64) (a, bt []gpu.Half, ref []float64) {
	r := rand.New(rand.NewPCG(seed, 9))
	a, bt = make([]gpu.Half, m*k), make([]gpu.Half, n*k)
	for i := range a {
		a[i] = gpu.ToHalf(float32(r.NormFloat64()))
	}
	for i := range bt {
		bt[i] = gpu.ToHalf(float32(r.NormFloat64()))
	}
	ref = make([]float64, m*n)
	for i := range m {
		for j := range n {
			s := 0.0
			for l := range k {
				s += float64(a[i*k+l].Float32()) * float64(bt[j*k+l].Float32())
			}
			ref[i*n+j] = s
		}
	}
	return a, bt, ref
}

func TestMatMulMMA(t *testing.T) {
	for _, s := range [][3]int{{16, 8, 16}, {32, 24, 48}, {64, 64, 64}} {
		m, n, k := s[0], s[1], s[2]
		a, bt, ref := mmaInputs(m, n, k, uint64(m))
		for _, dev := range devices() {
			da, db := must(kern.Upload(dev, a)), must(kern.Upload(dev, bt))
			dc := must(kern.Alloc[float32](dev, m*n))
			warps := m / 16 * (n / 8)
			if err := MatMulMMAKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: (warps + 3) / 4}, gpu.Dim3{X: 128}), da, db, dc, m, n, k); err != nil {
				t.Fatalf("%s %v: %v", dev.Kind(), s, err)
			}
			got := must(dc.Download())
			for i := range ref {
				// f16 products are exact in f32; k sums each round once:
				// |err| ≤ k·2^-24·Σ|a·b|, bounded here by k·2^-24·k·16.
				tol := float64(k) * 0x1p-24 * float64(k) * 16
				if d := math.Abs(float64(got[i]) - ref[i]); d > tol {
					t.Fatalf("%s %v: c[%d] = %v, want %v (|err| %.3g > %.3g)", dev.Kind(), s, i, got[i], ref[i], d, tol)
				}
			}
		}
	}
}

// BenchmarkEmuMMA512 times a 512×512×512 f16 tensor-core matmul on the
// emulator (goal: under 2 s on one core).
func BenchmarkEmuMMA512(b *testing.B) {
	const m, n, k = 512, 512, 512
	a, bt, _ := mmaInputs(16, 8, 16, 1)
	_ = a
	_ = bt
	dev := kern.OpenEmulator()
	da := must(kern.Alloc[gpu.Half](dev, m*k))
	db := must(kern.Alloc[gpu.Half](dev, n*k))
	dc := must(kern.Alloc[float32](dev, m*n))
	grid := kern.Blocks(gpu.Dim3{X: m / 16 * (n / 8) / 4}, gpu.Dim3{X: 128})
	for b.Loop() {
		if err := MatMulMMAKernel.Launch(dev, grid, da, db, dc, m, n, k); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*m*n*k/1e9*float64(b.N)/b.Elapsed().Seconds(), "GFLOP/s")
}

// A too-short A (one element): the k loop's checks are hoisted and, the
// loop being pure (loads and mma only), decided before it
// (compiler/hoist_pure.go). Every lane faults in the first iteration, so
// no mma runs short of a lane (which the emulator traps, as the hardware
// leaves it undefined), and the fault is reported at one of a's accesses
// in the loop with a's length.
func TestMatMulMMAShortA(t *testing.T) {
	const m, n, k = 16, 8, 32
	a, bt, _ := mmaInputs(m, n, k, 3)
	for _, dev := range devices() {
		da, db := must(kern.Upload(dev, a[:1])), must(kern.Upload(dev, bt))
		dc := must(kern.Alloc[float32](dev, m*n))
		err := MatMulMMAKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 1}, gpu.Dim3{X: 128}), da, db, dc, m, n, k)
		if err == nil {
			err = dev.Sync() // a GPU reports the fault at the next Sync (Kernel.Launch)
		}
		var de *kern.DeviceError
		if !errors.As(err, &de) {
			t.Fatalf("%s: err = %v, want a *kern.DeviceError", dev.Kind(), err)
		}
		if line := strings.TrimPrefix(de.Site, "kernels.go:"); len(line) < 3 || line[:3] < "275" || line[:3] > "278" || de.Length != 1 || de.Index < 1 {
			t.Errorf("%s: %q at %s index %d length %d, want a's access in the k loop (kernels.go:275-278), index ≥ 1, length 1", dev.Kind(), de.Message, de.Site, de.Index, de.Length)
		}
	}
}
