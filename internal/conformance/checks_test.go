package conformance

import (
	"errors"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// The emulator's sanitizers and profiler on kernels with known defects.

func TestRacecheckFindsTheMissingSync(t *testing.T) {
	dev := kern.OpenEmulator(emu.Options{Racecheck: true})
	xs := make([]float32, 128)
	x := must(kern.Upload(dev, xs))
	out := must(kern.Alloc[float32](dev, 128))
	err := ReverseRacyKernel.Launch(dev, kern.Cover(128), x, out)
	var rep *emu.Report
	if !errors.As(err, &rep) || len(rep.Findings) == 0 {
		t.Fatalf("racecheck: %v, want a report", err)
	}
	f := rep.Findings[0]
	if f.Tool != "racecheck" || f.File != "kernels.go" || f.Kernel != "ReverseRacy" {
		t.Errorf("finding %s: want racecheck in ReverseRacy at kernels.go", f.String())
	}
	if err := ReverseKernel.Launch(dev, kern.Cover(128), x, out); err != nil {
		t.Errorf("with the barrier: %v", err)
	}
}

func TestMemcheckFindsTheUncheckedIndex(t *testing.T) {
	dev := kern.OpenEmulator(emu.Options{Memcheck: true})
	x := must(kern.Upload(dev, []float32{1, 2, 3}))
	idx := must(kern.Upload(dev, []int32{0, 1, 1000, 2}))
	out := must(kern.Alloc[float32](dev, 4))
	err := GatherKernel.Launch(dev, kern.Cover(4), x, idx, out)
	var rep *emu.Report
	if !errors.As(err, &rep) || len(rep.Findings) == 0 {
		t.Fatalf("memcheck: %v, want a report", err)
	}
	f := rep.Findings[0]
	if f.Tool != "memcheck" || f.File != "kernels.go" || f.Thread[0] != 2 || !strings.Contains(f.What, "global load") {
		t.Errorf("finding %s: want a memcheck global load by thread 2 at kernels.go", f.String())
	}
}

// stats sums the profile of one kernel's shared or global accesses.
func stats(p *emu.Profile, kernel string) (conflicts, sharedReq int64, sectorEff float64) {
	var bytes, sectors int64
	for _, s := range p.Stats() {
		if s.Kernel != kernel {
			continue
		}
		conflicts += s.BankConflicts()
		sharedReq += s.SharedRequests
		bytes += s.GlobalBytes
		sectors += s.GlobalSectors
	}
	if sectors == 0 {
		return conflicts, sharedReq, 1
	}
	return conflicts, sharedReq, float64(bytes) / float64(32*sectors)
}

func TestProfileBankConflictsOfTransposes(t *testing.T) {
	const n = 64
	prof := emu.NewProfile()
	dev := kern.OpenEmulator(emu.Options{Observer: prof})
	in := must(kern.Upload(dev, make([]float32, n*n)))
	out := must(kern.Alloc[float32](dev, n*n))
	grid := kern.Blocks(gpu.Dim3{X: n / 32, Y: n / 32}, gpu.Dim3{X: 32, Y: 8})
	if err := TransposeKernel.Launch(dev, grid, in, out, n, n); err != nil {
		t.Fatal(err)
	}
	if err := TransposeNoPadKernel.Launch(dev, grid, in, out, n, n); err != nil {
		t.Fatal(err)
	}
	padded, reqP, _ := stats(prof, "Transpose")
	unpadded, reqU, _ := stats(prof, "TransposeNoPad")
	if reqP == 0 || padded != 0 {
		t.Errorf("padded transpose: %d bank conflicts in %d shared requests, want 0", padded, reqP)
	}
	// The column reads (half the shared requests) are 32-way: 31 extra
	// wavefronts each.
	if want := reqU / 2 * 31; unpadded != want {
		t.Errorf("unpadded transpose: %d bank conflicts in %d shared requests, want %d (32-way column reads)", unpadded, reqU, want)
	}
}

func TestProfileSectorEfficiency(t *testing.T) {
	const n = 4096
	prof := emu.NewProfile()
	dev := kern.OpenEmulator(emu.Options{Observer: prof})
	x := must(kern.Upload(dev, make([]float32, n*8)))
	out := must(kern.Alloc[float32](dev, n))
	if err := StridedKernel.Launch(dev, kern.Cover(n), x, out, 1); err != nil {
		t.Fatal(err)
	}
	_, _, coalesced := stats(prof, "Strided")
	prof2 := emu.NewProfile()
	dev2 := kern.OpenEmulator(emu.Options{Observer: prof2})
	x2 := must(kern.Upload(dev2, make([]float32, n*8)))
	out2 := must(kern.Alloc[float32](dev2, n))
	if err := StridedKernel.Launch(dev2, kern.Cover(n), x2, out2, 8); err != nil {
		t.Fatal(err)
	}
	_, _, strided := stats(prof2, "Strided")
	if coalesced < 0.99 {
		t.Errorf("stride 1: sector efficiency %.2f, want ~1", coalesced)
	}
	// Stride 8: the load uses 4 of 32 bytes per sector, the store all 32.
	if strided > 0.6 {
		t.Errorf("stride 8: sector efficiency %.2f, want well below the coalesced %.2f", strided, coalesced)
	}
}
