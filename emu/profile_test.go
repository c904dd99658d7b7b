package emu

import (
	"bytes"
	"strings"
	"testing"
)

func TestProfileBankConflictsAndSectors(t *testing.T) {
	m := loadTestdata(t, "bank.ptx")
	p := NewProfile()
	d := NewDevice(Options{Observer: p})
	g := upload(t, d, make([]byte, 32*32))
	const blocks = 3
	if err := d.Launch(m, "bank", LaunchConfig{Grid: [3]int{blocks}, Block: [3]int{32}, Params: params{}.u64(g)}); err != nil {
		t.Fatal(err)
	}
	byLine := map[int]InstrStats{}
	for _, s := range p.Stats() {
		byLine[s.Line] = s
	}
	want := []struct {
		line              int
		wavefronts, ideal int64 // per request
		sectors           int64
		eff               float64
	}{
		{35, 1, 1, 0, 1}, {36, 2, 1, 0, 1}, {37, 32, 1, 0, 1}, {38, 1, 1, 0, 1}, {39, 2, 2, 0, 1},
		{40, 0, 0, 4, 1}, {41, 0, 0, 32, 0.125},
	}
	for _, w := range want {
		s, ok := byLine[w.line]
		if !ok {
			t.Errorf("no stats for PTX line %d", w.line)
			continue
		}
		if s.Executions != blocks || s.ActiveLanes != 32*blocks {
			t.Errorf("line %d: %d executions, %d active lanes; want %d, %d", w.line, s.Executions, s.ActiveLanes, blocks, 32*blocks)
		}
		if s.SharedWavefronts != w.wavefronts*blocks || s.SharedIdeal != w.ideal*blocks {
			t.Errorf("line %d (%s): %d wavefronts (ideal %d), want %d (%d)", w.line, s.Instr, s.SharedWavefronts, s.SharedIdeal, w.wavefronts*blocks, w.ideal*blocks)
		}
		if s.GlobalSectors != w.sectors*blocks || s.SectorEfficiency() != w.eff {
			t.Errorf("line %d (%s): %d sectors at %.3f efficiency, want %d at %.3f", w.line, s.Instr, s.GlobalSectors, s.SectorEfficiency(), w.sectors*blocks, w.eff)
		}
	}
	var buf bytes.Buffer
	if err := p.WriteReport(&buf); err != nil {
		t.Fatal(err)
	}
	table, legend, _ := strings.Cut(buf.String(), "\n\n")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	// The 32-way conflict is the worst offender and comes first.
	if len(lines) != 8 || !strings.Contains(lines[1], "ptx:37") || !strings.Contains(lines[1], "93") || !strings.Contains(legend, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared") {
		t.Errorf("report:\n%s", buf.String())
	}
}

func TestSharedWavefrontsModel(t *testing.T) {
	var a [32]uint64
	for l := range a {
		a[l] = uint64(16 * l) // 16-byte stride
	}
	// 16-byte accesses: 4 quarter-warp phases; each phase's 8 lanes cover
	// 32 distinct banks once: 4 wavefronts, no conflict.
	if w, i := SharedWavefronts(0xffffffff, &a, 16); w != 4 || i != 4 {
		t.Errorf("v4 stride 16: %d wavefronts (ideal %d), want 4 (4)", w, i)
	}
	// 4-byte accesses at a 16-byte stride: 4 lanes per bank: 4-way.
	if w, i := SharedWavefronts(0xffffffff, &a, 4); w != 4 || i != 1 {
		t.Errorf("u32 stride 16: %d wavefronts (ideal %d), want 4 (1)", w, i)
	}
	// Lanes 0, 8, 16 and 24 hit bank 0 at different words; the other
	// lanes are inactive and do not count.
	if w, _ := SharedWavefronts(0x01010101, &a, 4); w != 4 {
		t.Errorf("4 lanes in one bank: %d wavefronts, want 4", w)
	}
	if w, _ := SharedWavefronts(0x0000000f, &a, 4); w != 1 {
		t.Errorf("4 lanes in 4 banks: %d wavefronts, want 1", w)
	}
}
