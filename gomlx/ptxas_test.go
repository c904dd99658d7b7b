package gomlx

import (
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the backend's kernels (one PTX module) with
// NVIDIA's ptxas for sm_80 and sm_90 and requires every entry to compile
// without register spills. It skips without ptxas, except under CI=true
// (see internal/ptxas).
func TestPTXAssembles(t *testing.T) {
	ptxas.CheckModule(t, "gomlx", kernModule.PTX)
}
