package attnk

import (
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the kernels for sm_80 and sm_90 and requires
// each to compile without register spills (the O accumulator of a warp's
// 16 rows at head dim 128 is 64 registers, Q's fragments 32 more).
func TestPTXAssembles(t *testing.T) {
	ptxas.CheckModule(t, "attnk", kernModule.PTX)
}
