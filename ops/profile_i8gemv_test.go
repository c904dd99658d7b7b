package ops

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
)

// TestProfileMatmulInt8GEMV profiles the W8A8 decode GEMV on the emulator:
// every weight byte read by a 128-bit cp.async (the copies of &w[ in
// i8gemv.go), the cp.async loads ≥ 95% sector-efficient, and 0 bank
// conflicts on the cp.async stores and 128-bit shared loads. M = 7 takes
// two passes over W (the second from L2 on a GPU), so its weight bytes
// are counted against 2·N·K.
func TestProfileMatmulInt8GEMV(t *testing.T) {
	const n, k = 64, 1024
	src, err := os.ReadFile("internal/i8gemv/i8gemv.go")
	if err != nil {
		t.Fatal(err)
	}
	var wLines []int
	for i, line := range strings.Split(string(src), "\n") {
		if strings.Contains(line, "gpu.CpAsync(") && strings.Contains(line, "&w[") {
			wLines = append(wLines, i+1)
		}
	}
	if len(wLines) == 0 {
		t.Fatal("no cp.async of &w[ in i8gemv.go")
	}
	for _, m := range []int{1, 7} {
		p := emu.NewProfile()
		dev := kern.OpenEmulator(emu.Options{Observer: p})
		c := alloc[float32](t, dev, m*n)
		err := matmulInt8(i8GEMV, dev, c, uploadT(t, dev, make([]int8, m*k)), uploadT(t, dev, make([]float32, m)),
			uploadT(t, dev, make([]int8, n*k)), uploadT(t, dev, make([]float32, n)), m, n, k)
		if err != nil {
			t.Fatal(err)
		}
		var wide, ldBytes, ldSectors, conflicts int64
		for _, st := range p.Stats() {
			conflicts += st.BankConflicts()
			if strings.HasPrefix(st.Instr, "cp.async.cg") && st.File == "i8gemv.go" && slices.Contains(wLines, st.GoLine) {
				wide += st.GlobalBytes
			}
			if strings.HasPrefix(st.Instr, "cp.async") {
				ldBytes += st.GlobalBytes
				ldSectors += st.GlobalSectors
			}
			if st.BankConflicts() != 0 {
				t.Logf("m=%d line %d: %s: %d conflicts", m, st.GoLine, st.Instr, st.BankConflicts())
			}
		}
		passes := (m + 3) / 4
		share := float64(wide) / float64(passes*n*k)
		eff := float64(ldBytes) / float64(32*ldSectors)
		t.Logf("W8A8 GEMV %dx%dx%d: %.1f%% of weight bytes by 128-bit cp.async, cp.async sector efficiency %.1f%%, %d bank conflicts", m, n, k, 100*share, 100*eff, conflicts)
		if share < 0.95 || share > 1 {
			t.Errorf("m=%d: %.1f%% of the weight bytes read by 128-bit loads, want ≥ 95%%", m, 100*share)
		}
		if eff < 0.95 {
			t.Errorf("m=%d: cp.async sector efficiency %.1f%%, want ≥ 95%%", m, 100*eff)
		}
		if conflicts != 0 {
			t.Errorf("m=%d: %d bank conflicts, want 0", m, conflicts)
		}
	}
}
