package emu

import (
	"errors"
	"strings"
	"testing"
)

// pingpongChecked runs testdata/mbarrier.ptx under racecheck and
// synccheck and returns the findings.
func pingpongChecked(t *testing.T, skip uint32) []Finding {
	t.Helper()
	m := loadTestdata(t, "mbarrier.ptx")
	d := NewDevice(Options{Racecheck: true, Synccheck: true})
	out := upload(t, d, make([]byte, 4*32))
	err := d.Launch(m, "pingpong", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64},
		Params: params{}.u64(out).u32(skip).u32(32)})
	var r *Report
	if err != nil && !errors.As(err, &r) {
		t.Fatal(err)
	}
	if r == nil {
		return nil
	}
	return r.Findings
}

// TestRacecheckMbarrierOrdering: the producer warp's stores are released
// by its arrivals and acquired by the consumer's waits, and the
// consumer's reads by its arrivals on "empty" before the producer
// overwrites: no hazard, though no bar.sync separates any of it.
func TestRacecheckMbarrierOrdering(t *testing.T) {
	if f := pingpongChecked(t, 0); len(f) != 0 {
		t.Fatalf("a correct mbarrier hand-over reported %v", f)
	}
}

// TestRacecheckMbarrierSkippedWait: a consumer that skips its wait on
// "full" reads what the producer wrote with nothing ordering the two.
func TestRacecheckMbarrierSkippedWait(t *testing.T) {
	f := pingpongChecked(t, 1)
	for _, x := range f {
		if x.Tool == "racecheck" && strings.Contains(x.What, "hazard") {
			t.Log(x.String())
			return
		}
	}
	t.Fatalf("a skipped mbarrier wait was not reported as a hazard; findings %v", f)
}
