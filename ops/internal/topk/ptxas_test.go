package topk

import (
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the package's PTX for sm_80 and sm_90 and
// requires every kernel to compile without register spills.
func TestPTXAssembles(t *testing.T) {
	ptxas.CheckModule(t, "topk", kernModule.PTX)
}
