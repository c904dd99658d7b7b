package attn256

import (
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the kernels for sm_80 and sm_90 and requires
// each to compile without register spills (the O accumulator of a warp's
// 16 rows at head dim 256 is 128 registers per lane).
func TestPTXAssembles(t *testing.T) {
	ptxas.CheckModule(t, "attn256", kernModule.PTX)
}
