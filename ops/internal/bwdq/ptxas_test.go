package bwdq

import (
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the kernels for sm_80 and sm_90 and requires
// each to compile without register spills (a warp's 16 rows of dQ are 64
// f32 registers per lane at head dim 128).
func TestPTXAssembles(t *testing.T) {
	ptxas.CheckModule(t, "bwdq", kernModule.PTX)
}
