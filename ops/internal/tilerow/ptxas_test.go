package tilerow

import (
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the kernels for sm_80 and sm_90 and requires
// each to compile without register spills.
func TestPTXAssembles(t *testing.T) {
	ptxas.CheckModule(t, "tilerow", kernModule.PTX)
}
