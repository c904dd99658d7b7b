package i8

import (
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the package's PTX for sm_80 and sm_90 and
// requires every kernel to compile without register spills.
func TestPTXAssembles(t *testing.T) {
	reports := ptxas.Check(t, "i8", []byte(kernModule.PTX))
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
			t.Logf("%s: %v", arch, f)
		}
	}
}
