package attnhv2

import (
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the kernels for sm_90a (the only target
// wgmma allows) and requires each to compile without spills or stack,
// and without ptxas serialising the wgmmas.
func TestPTXAssembles(t *testing.T) {
	want := strings.Count(kernModule.PTX, ".visible .entry ")
	rep := ptxas.Check(t, "attnhv2", []byte(kernModule.PTX), "sm_90a")["sm_90a"]
	if rep == nil {
		return
	}
	if n := len(rep.Entries()); n != want {
		t.Errorf("ptxas reported %d entries, the module has %d", n, want)
	}
	// ptxas serialises wgmmas it finds in flight across, or issued
	// under, a branch it cannot prove uniform, and says so in an info
	// line (C7518, C7519, ...: "wgmma.mma_async instructions are
	// serialized"); the pipeline in flash.go is shaped to avoid that.
	for _, line := range strings.Split(rep.Log, "\n") {
		if strings.Contains(line, "serialized") {
			t.Errorf("ptxas: %s", line)
		}
	}
	for _, f := range rep.Entries() {
		if f.Spills() || f.StackFrame != 0 {
			t.Errorf("%s spills or uses stack: %v", f.Name, f)
		}
		t.Logf("sm_90a: %v", f)
	}
}
