package qwen3

import (
	"strings"
	"testing"
)

// TestPersistentPhases: the phase timer refuses to run off the persistent
// layer and to be read before a timed step; after a decode step on the
// emulator every block's marks rise (each phase a non-negative count of
// the block's instructions) and the work phases are not empty.
func TestPersistentPhases(t *testing.T) {
	cfg := Presets["tiny"]
	m := randomOps(t, testDevices[0].dev, cfg, 3, false)
	if err := m.ProfilePersistentDecode(true); err == nil || !strings.Contains(err.Error(), "UsePersistentDecode") {
		t.Errorf("the timer without the persistent layer: %v", err)
	}
	persist(t, m, 4)
	if _, err := m.PersistentPhases(); err == nil || !strings.Contains(err.Error(), "timer is off") {
		t.Errorf("reading the timer while it is off: %v", err)
	}
	if err := m.ProfilePersistentDecode(true); err != nil {
		t.Fatal(err)
	}
	if _, err := m.PersistentPhases(); err == nil || !strings.Contains(err.Error(), "no decode step") {
		t.Errorf("the timer before a step: %v", err)
	}
	pool, err := m.NewKVPool(64, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Free()
	s := pool.NewSeq()
	if _, err := m.ForwardBatch([]*Seq{s}, [][]int32{{1, 2, 3, 4, 5}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ForwardBatch([]*Seq{s}, [][]int32{{6}}); err != nil {
		t.Fatal(err)
	}
	ph, err := m.PersistentPhases()
	if err != nil {
		t.Fatal(err)
	}
	if len(ph) != len(megaPhases) {
		t.Fatalf("%d phases, want %d", len(ph), len(megaPhases))
	}
	for _, p := range ph {
		if p.Min < 0 || p.Min > p.Mean || p.Mean > p.Max {
			t.Errorf("%s: min %g, mean %g, max %g: a block's marks went back", p.Phase, p.Min, p.Mean, p.Max)
		}
		if strings.Contains(p.Phase, "GEMV") || strings.Contains(p.Phase, "RMSNorm") || p.Phase == "attention" {
			if p.Mean <= 0 {
				t.Errorf("%s: mean %g instructions, want some", p.Phase, p.Mean)
			}
		}
	}
}

// TestMegaPhaseTimes: the summary of two blocks' marks.
func TestMegaPhaseTimes(t *testing.T) {
	marks := make([]int64, 2*megaMarks)
	for k := 0; k <= len(megaPhases); k++ {
		marks[k] = int64(10 * k)               // 10 a phase
		marks[megaMarks+k] = int64(100 + 10*k) // another block, its own counter
	}
	marks[megaMarks+1], marks[megaMarks+2] = 130, 150 // phases 0 and 1 of block 1: 30 and 20
	ph := megaPhaseTimes(marks)
	if ph[0].Mean != 20 || ph[0].Min != 10 || ph[0].Max != 30 {
		t.Errorf("phase 0: %+v, want mean 20, min 10, max 30", ph[0])
	}
	if ph[1].Mean != 15 || ph[1].Min != 10 || ph[1].Max != 20 {
		t.Errorf("phase 1: %+v, want mean 15, min 10, max 20", ph[1])
	}
}
