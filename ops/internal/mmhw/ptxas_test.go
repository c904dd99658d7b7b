package mmhw

import (
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the module for sm_90a (the only target it
// loads on) and checks what the wide tile is built on: four wgmmas per k
// tile of m64n256k16 (128 accumulator registers a consumer thread); no
// spills and no stack; every kernel within the launch count that
// .maxntid 384 allows one block (65,536 / 384 → 168), which setmaxnreg
// redistributes, one dec to producerRegs and one inc to consumerRegs per
// kernel; and the shared memory of four stages with the epilogue staging
// within an H100's 227 KiB.
func TestPTXAssembles(t *testing.T) {
	ptx := kernModule.PTX
	entries := strings.Count(ptx, ".visible .entry ")
	if entries != 4 { // 4 type pairs, W[N,K]
		t.Fatalf("%d entries, want 4", entries)
	}
	if n := strings.Count(ptx, "wgmma.mma_async.sync.aligned.m64n256k16."); n != 4*entries {
		t.Errorf("%d m64n256k16 wgmmas, want 4 per kernel", n)
	}
	if n := strings.Count(ptx, "wgmma.mma_async.sync.aligned."); n != 4*entries {
		t.Errorf("%d wgmmas in all, want only the 4 m64n256k16 per kernel", n)
	}
	for _, want := range []string{"setmaxnreg.dec.sync.aligned.u32 40;", "setmaxnreg.inc.sync.aligned.u32 232;"} {
		if n := strings.Count(ptx, want); n != entries {
			t.Errorf("%q %d times, want once per kernel", want, n)
		}
	}
	if total := 128*producerRegs + (Threads-128)*consumerRegs; total > 64*1024 {
		t.Errorf("the split needs %d registers, an SM has 65536", total)
	}
	if b := SharedBytes(MaxStages) + 1024; b > 227*1024 {
		t.Errorf("%d stages need %d bytes of shared memory with the static 1 KiB, an H100 allows %d", MaxStages, b, 227*1024)
	}
	rep := ptxas.Check(t, "mmhw", []byte(ptx), "sm_90a")["sm_90a"]
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
