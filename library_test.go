package kern_test

import (
	"math"
	"testing"

	"github.com/gokern/kern"
	tk "github.com/gokern/kern/internal/testkernels"
)

// TestKernelLibraryHelpers runs a kernel built on another package's
// device helpers (internal/testkernels/devlib, //kern:library): a block
// reduction, an FMA and a generic index wrap, against float64, on the
// emulator and natively.
func TestKernelLibraryHelpers(t *testing.T) {
	const n, a, shift = 300, 0.75, -7
	xs, ys := randFloats(n, 11), randFloats(n, 12)
	for _, dev := range devices() {
		x, _ := kern.Upload(dev, xs)
		y, _ := kern.Upload(dev, ys)
		out, _ := kern.Alloc[float32](dev, n)
		grid := kern.Cover(n)
		if err := tk.CenterAxpyKernel.Launch(dev, grid, a, x, y, out, shift); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		gotY, _ := y.Download()
		gotOut, _ := out.Download()
		for b := 0; b*128 < n; b++ {
			sum, mag := 0.0, 0.0
			for i := b * 128; i < min(n, (b+1)*128); i++ {
				sum += float64(xs[i])
				mag += math.Abs(float64(xs[i]))
			}
			mean := sum / 128 // threads past n add 0
			for i := b * 128; i < min(n, (b+1)*128); i++ {
				want := float64(a)*(float64(xs[i])-mean) + float64(ys[i])
				tol := 256*0x1p-24*mag/128*a + 2*0x1p-24*(math.Abs(want)+math.Abs(float64(ys[i])))
				if d := math.Abs(float64(gotY[i]) - want); d > tol {
					t.Fatalf("%s: y[%d] = %g, want %g (tol %.2g)", dev.Kind(), i, gotY[i], want, tol)
				}
				j := ((i+shift)%n + n) % n
				if gotOut[i] != xs[j] {
					t.Fatalf("%s: out[%d] = %g, want x[%d] = %g", dev.Kind(), i, gotOut[i], j, xs[j])
				}
			}
		}
	}
}
