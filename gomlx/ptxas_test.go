package gomlx

import (
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the backend's kernels (one PTX module) with
// NVIDIA's ptxas for sm_80 and sm_90 and requires every entry to compile
// without register spills. It skips without ptxas, except under CI=true
// (see internal/ptxas).
func TestPTXAssembles(t *testing.T) {
	reports := ptxas.Check(t, "gomlx", []byte(kernModule.PTX))
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
		}
	}
}
