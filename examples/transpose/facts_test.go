package main

// TransposePadded is an idx32 kernel whose guarded accesses the 32-bit
// entry proves from launch facts (cols ≥ 0, len(in) ≥ rows·cols, …;
// compiler/launchfact.go): a launch runs that entry only where the facts
// hold, so a short slice still faults exactly, and a short slice no
// access reaches does not fault at all.

import (
	"errors"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// transposeOn launches TransposePadded over a gridX×gridY grid of tiles
// with inputs of lengths nIn and nOut, and returns the output, the error
// and, on the emulator, the entries that ran.
func transposeOn(t *testing.T, dev *kern.Device, p *emu.Profile, rows, cols, gridX, gridY, nIn, nOut int) ([]float32, []float32, error, map[string]bool) {
	t.Helper()
	xs := make([]float32, nIn)
	for i := range xs {
		xs[i] = float32(i + 1)
	}
	in, err := kern.Upload(dev, xs)
	if err != nil {
		t.Fatal(err)
	}
	out, err := kern.Alloc[float32](dev, nOut)
	if err != nil {
		t.Fatal(err)
	}
	lerr := TransposePaddedKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: gridX, Y: gridY, Z: 1}, gpu.Dim3{X: 32, Y: 8}), in, out, rows, cols)
	ys, err := out.Download()
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]bool{}
	if p != nil {
		for _, s := range p.Stats() {
			ran[s.Kernel] = true
		}
	}
	return xs, ys, lerr, ran
}

func TestPaddedEntries(t *testing.T) {
	for _, c := range []struct {
		name                 string
		rows, cols, gx, gy   int
		nIn, nOut            int
		entry                string
		faultIndex, faultLen int // faultLen 0: no fault
	}{
		// The facts hold: the 32-bit entry, whole and partial tiles.
		{"70x45", 70, 45, 2, 3, 70 * 45, 70 * 45, "TransposePadded_i32", 0, 0},
		// in one element short: the fact len(in) ≥ rows·cols fails, the
		// kernel's entry runs and faults at the last element, in's read.
		{"in short by one", 70, 45, 2, 3, 70*45 - 1, 70 * 45, "TransposePadded", 70*45 - 1, 70*45 - 1},
		// out short by one: the store faults.
		{"out short by one", 70, 45, 2, 3, 70 * 45, 70*45 - 1, "TransposePadded", 70*45 - 1, 70*45 - 1},
		// 64×64 declared, but one block covers rows and columns 0..31
		// only: the facts fail (2048 < 64·64), no access leaves the
		// slices, so nothing is reported.
		{"short but unreached", 64, 64, 1, 1, 32 * 64, 32 * 64, "TransposePadded", 0, 0},
	} {
		for _, kind := range []string{"emulator", "native"} {
			var dev *kern.Device
			var p *emu.Profile
			if kind == "emulator" {
				p = emu.NewProfile()
				dev = kern.OpenEmulator(emu.Options{Observer: p})
			} else {
				dev = kern.OpenNative()
			}
			xs, ys, err, ran := transposeOn(t, dev, p, c.rows, c.cols, c.gx, c.gy, c.nIn, c.nOut)
			dev.Close()
			if p != nil && (len(ran) != 1 || !ran[c.entry]) {
				t.Errorf("%s: entries %v ran, want %s", c.name, ran, c.entry)
			}
			if c.faultLen > 0 {
				var de *kern.DeviceError
				if !errors.As(err, &de) {
					t.Fatalf("%s, %s: err = %v, want a *kern.DeviceError", c.name, kind, err)
				}
				line := "kernels.go:66:"
				if strings.HasPrefix(c.name, "out") {
					line = "kernels.go:75:"
				}
				if !strings.HasPrefix(de.Site, line) || de.Index != int64(c.faultIndex) || de.Length != int64(c.faultLen) {
					t.Errorf("%s, %s: fault at %s index %d length %d, want %s index %d length %d", c.name, kind, de.Site, de.Index, de.Length, line, c.faultIndex, c.faultLen)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s, %s: %v", c.name, kind, err)
			}
			// What the grid covers is transposed exactly.
			for r := range min(c.rows, 32*c.gy) {
				for col := range min(c.cols, 32*c.gx) {
					if got, want := ys[col*c.rows+r], xs[r*c.cols+col]; got != want {
						t.Fatalf("%s, %s: out[%d][%d] = %v, want %v", c.name, kind, col, r, got, want)
					}
				}
			}
		}
	}
}
