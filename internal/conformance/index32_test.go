package conformance

// MatMulMMA is an idx32 kernel: a launch whose arguments fit 32-bit index
// arithmetic runs its entry MatMulMMA_i32, any other MatMulMMA
// (kern/index32.go). Both give the same result bit for bit, and a
// fault in either is reported at the same Go position with the same
// index and length.

import (
	"errors"
	"math"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// entryRan launches MatMulMMA on a profiled emulator and returns the
// entries that ran, the output and the launch's error.
func entryRan(t *testing.T, a, bt []gpu.Half, m, n, k, mArg int) (map[string]bool, []float32, error) {
	t.Helper()
	p := emu.NewProfile()
	dev := kern.OpenEmulator(emu.Options{Observer: p})
	defer dev.Close()
	da, db := must(kern.Upload(dev, a)), must(kern.Upload(dev, bt))
	dc := must(kern.Alloc[float32](dev, m*n))
	warps := m / 16 * (n / 8)
	err := MatMulMMAKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: (warps + 3) / 4}, gpu.Dim3{X: 128}), da, db, dc, mArg, n, k)
	ran := map[string]bool{}
	for _, s := range p.Stats() {
		ran[s.Kernel] = true
	}
	return ran, must(dc.Download()), err
}

func TestMatMulMMAPicksItsEntry(t *testing.T) {
	const m, n, k = 32, 32, 48 // 8 warps, 2 whole blocks: no warp past m
	a, bt, _ := mmaInputs(m, n, k, 5)
	nat := kern.OpenNative()
	da, db := must(kern.Upload(nat, a)), must(kern.Upload(nat, bt))
	dc := must(kern.Alloc[float32](nat, m*n))
	warps := m / 16 * (n / 8)
	if err := MatMulMMAKernel.Launch(nat, kern.Blocks(gpu.Dim3{X: (warps + 3) / 4}, gpu.Dim3{X: 128}), da, db, dc, m, n, k); err != nil {
		t.Fatal(err)
	}
	want := must(dc.Download())
	var first []float32
	// m only bounds the tile rows, so a larger m computes the same tiles
	// over this grid. The 32-bit entry proves A's and C's accesses from
	// launch facts (len(a) ≥ 16·((m−1)/16+1)·k, …; compiler/launchfact.go):
	// a larger m with the same A fails them, so such a launch runs the
	// entry that checks each access, and as none is out of bounds
	// reports nothing. m past int32 fails the 32-bit entry's own rule.
	for _, c := range []struct {
		mArg  int
		entry string
	}{{m, "MatMulMMA_i32"}, {m + 1, "MatMulMMA"}, {math.MaxInt32, "MatMulMMA"}, {math.MaxInt32 + 1, "MatMulMMA"}, {1 << 40, "MatMulMMA"}} {
		ran, got, err := entryRan(t, a, bt, m, n, k, c.mArg)
		if err != nil {
			t.Fatalf("m = %d: %v", c.mArg, err)
		}
		if len(ran) != 1 || !ran[c.entry] {
			t.Errorf("m = %d: entries %v ran, want %s", c.mArg, ran, c.entry)
		}
		if first == nil {
			first = got
		}
		for i := range want {
			// The entries compute alike: bit for bit. Native mode's mma
			// sums in another order: TestMatMulMMA's tolerance.
			if math.Float32bits(got[i]) != math.Float32bits(first[i]) {
				t.Fatalf("m = %d (%s): c[%d] = %v, the 32-bit entry's %v", c.mArg, c.entry, i, got[i], first[i])
			}
			if d, tol := math.Abs(float64(got[i]-want[i])), float64(k)*0x1p-24*float64(k)*16; d > tol {
				t.Fatalf("m = %d (%s): c[%d] = %v, native mode %v", c.mArg, c.entry, i, got[i], want[i])
			}
		}
	}
}

// A too-short A faults in both entries at the same site, index and
// length.
func TestMatMulMMAEntriesFaultAlike(t *testing.T) {
	const m, n, k = 16, 8, 32
	a, bt, _ := mmaInputs(m, n, k, 3)
	var errs [2]*kern.DeviceError
	for i, mArg := range []int{m, 1 << 40} {
		_, _, err := entryRan(t, a[:5], bt, m, n, k, mArg)
		if !errors.As(err, &errs[i]) {
			t.Fatalf("m = %d: err = %v, want a *kern.DeviceError", mArg, err)
		}
	}
	x, y := errs[0], errs[1]
	if x.Kernel != "MatMulMMA" || x.Site != y.Site || x.Index != y.Index || x.Length != y.Length || x.Length != 5 {
		t.Errorf("32-bit entry: %s at %s index %d length %d; 64-bit entry: %s at %s index %d length %d; want one fault of MatMulMMA, length 5",
			x.Kernel, x.Site, x.Index, x.Length, y.Kernel, y.Site, y.Index, y.Length)
	}
}
