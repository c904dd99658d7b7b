package mmh

import (
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the module for sm_90a (the only target it
// loads on) and checks the register budget the warp specialisation is
// built on: no spills and no stack; every kernel within the launch
// count that .maxntid 384 allows one block (65,536 / 384 → 168), which
// is what setmaxnreg redistributes; and the split itself, one dec to
// producerRegs and one inc to consumerRegs per kernel, fitting the SM's
// 64K registers.
func TestPTXAssembles(t *testing.T) {
	ptx := kernModule.PTX
	entries := strings.Count(ptx, ".visible .entry ")
	if entries != 8 { // 4 type pairs × W[N,K] and B[K,N]
		t.Fatalf("%d entries, want 8", entries)
	}
	for _, want := range []string{"setmaxnreg.dec.sync.aligned.u32 40;", "setmaxnreg.inc.sync.aligned.u32 232;"} {
		if n := strings.Count(ptx, want); n != entries {
			t.Errorf("%q %d times, want once per kernel", want, n)
		}
	}
	if total := 128*producerRegs + (Threads-128)*consumerRegs; total > 64*1024 {
		t.Errorf("the split needs %d registers, an SM has 65536", total)
	}
	rep := ptxas.Check(t, "mmh", []byte(ptx), "sm_90a")["sm_90a"]
	if rep == nil {
		return // no ptxas here (Check skipped or failed)
	}
	if got := len(rep.Entries()); got != entries {
		t.Errorf("ptxas reported %d entries, want %d", got, entries)
	}
	for _, f := range rep.Entries() {
		if f.Spills() || f.StackFrame != 0 {
			t.Errorf("%s spills or has a stack: %v", f.Name, f)
		}
		if f.Registers > 65536/Threads {
			t.Errorf("%s: %d registers; a block of %d threads then does not launch", f.Name, f.Registers, Threads)
		}
		t.Logf("sm_90a: %v", f)
	}
}
