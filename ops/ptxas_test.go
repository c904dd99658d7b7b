package ops

import (
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the package's PTX (every kernel is an entry
// of one module) for sm_80 and sm_90 and requires each entry to compile
// without register spills.
func TestPTXAssembles(t *testing.T) {
	ptxas.CheckModule(t, "ops", kernModule.PTX)
}
