package tilemm

import (
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// TestProfile profiles the tile matmul on the emulator at the shape of
// ops' TestProfileMatmul (m ragged, n and k multiples of 64 and 32): no
// bank conflicts on any shared access (Stage's cp.async stores, Dot's
// ldmatrix, Acc.Mat's staging), and global loads (cp.async, the bias)
// at least 95% sector-efficient, as the warp-level twin.
func TestProfile(t *testing.T) {
	const m, n, k = 200, 192, 96
	p := emu.NewProfile()
	dev := kern.OpenEmulator(emu.Options{Observer: p})
	a := must(kern.Upload(dev, make([]gpu.Half, m*k)))
	w := must(kern.Upload(dev, make([]gpu.Half, n*k)))
	bias := must(kern.Upload(dev, make([]float32, n)))
	c := must(kern.Alloc[float32](dev, m*n))
	grid := kern.Blocks(gpu.Dim3{X: (n + BN - 1) / BN, Y: (m + BM - 1) / BM, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1})
	if err := MatmulF16Kernel.Launch(dev, grid, c, a, w, bias, m, n, k); err != nil {
		t.Fatal(err)
	}
	var ldBytes, ldSectors, conflicts, sharedReqs int64
	for _, st := range p.Stats() {
		conflicts += st.BankConflicts()
		sharedReqs += st.SharedRequests
		if strings.HasPrefix(st.Instr, "cp.async") || strings.HasPrefix(st.Instr, "ld.global") {
			ldBytes += st.GlobalBytes
			ldSectors += st.GlobalSectors
		}
		if st.BankConflicts() != 0 {
			t.Logf("line %d: %s: %d conflicts in %d requests", st.GoLine, st.Instr, st.BankConflicts(), st.SharedRequests)
		}
	}
	eff := float64(ldBytes) / float64(32*ldSectors)
	t.Logf("global load sector efficiency %.1f%%, %d shared requests, %d bank conflicts", 100*eff, sharedReqs, conflicts)
	if eff < 0.95 {
		t.Errorf("global load sector efficiency %.1f%%, want ≥ 95%%", 100*eff)
	}
	if conflicts != 0 || sharedReqs == 0 {
		t.Errorf("%d bank conflicts in %d shared requests, want 0", conflicts, sharedReqs)
	}
}
