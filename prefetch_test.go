package kern_test

import (
	"math"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/testkernels/prefetchk"
)

// TestPrefetchL2ChangesNothing: a two-phase grid-synchronised kernel
// that prefetches (gpu.PrefetchL2) before its barrier computes what it
// would without, exactly, on the emulator and natively (and on a GPU
// under -tags gpu, prefetch_gpu_test.go). That the emulator runs only the
// in-range lanes' prefetch is compiler/prefetch_test.go's check.
func TestPrefetchL2ChangesNothing(t *testing.T) {
	for _, dev := range devices() {
		checkTwoPhasePrefetch(t, dev)
	}
}

// checkTwoPhasePrefetch launches prefetchk.TwoPhase with its extra
// prefetch index in range, just past either end, and near the int
// limits: an out-of-range prefetch prefetches nothing and never faults.
func checkTwoPhasePrefetch(t *testing.T, dev *kern.Device) {
	t.Helper()
	const blocks, threads = 3, 64
	n := blocks*threads - 5 // the last threads have no element
	xs, ws := make([]float32, n), make([]float32, 70)
	for i := range xs {
		xs[i] = float32(i%37) - 11 // small integers: every sum is exact
	}
	for i := range ws {
		ws[i] = float32(3 * i)
	}
	const shift = 9
	grid := kern.Blocks(gpu.Dim3{X: blocks, Y: 1, Z: 1}, gpu.Dim3{X: threads, Y: 1, Z: 1})
	x, err := kern.Upload(dev, xs)
	if err != nil {
		t.Fatal(err)
	}
	w, err := kern.Upload(dev, ws)
	if err != nil {
		t.Fatal(err)
	}
	out, err := kern.Alloc[float32](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, far := range []int{0, 40, len(ws), -1, -blocks * threads, 1 << 40, -1 << 40, math.MaxInt64 - 1000, math.MinInt64} {
		if err := prefetchk.TwoPhaseKernel.Launch(dev, grid, x, w, out, shift, far); err != nil {
			t.Fatalf("%s far=%d: %v", dev.Kind(), far, err)
		}
		got, err := out.Download()
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if want := 2*xs[i] + ws[(i+shift)%len(ws)]; v != want {
				t.Fatalf("%s far=%d: out[%d] = %v, want %v", dev.Kind(), far, i, v, want)
			}
		}
	}
}
