package tiletest

import (
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the package's PTX (every kernel is an entry
// of one module) for sm_80 and sm_90 and requires each entry to compile
// without register spills.
func TestPTXAssembles(t *testing.T) {
	reports := ptxas.Check(t, "tiletest", []byte(kernModule.PTX))
	want := strings.Count(kernModule.PTX, ".visible .entry ")
	for arch, rep := range reports {
		entries := rep.Entries()
		if len(entries) != want {
			t.Errorf("%s: ptxas reported %d entries, the module has %d", arch, len(entries), want)
		}
		for _, f := range entries {
			if f.Spills() {
				t.Errorf("%s: %s spills: %v", arch, f.Name, f)
			}
			if testing.Verbose() {
				t.Logf("%s: %v", arch, f)
			}
		}
	}
}
