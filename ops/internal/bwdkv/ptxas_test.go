package bwdkv

import (
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestPTXAssembles assembles the kernels for sm_80 and sm_90 and requires
// each to compile without register spills (the KV kernel holds a warp's
// 16 rows of both dK and dV: 128 f32 registers per lane at head dim 128).
func TestPTXAssembles(t *testing.T) {
	ptxas.CheckModule(t, "bwdkv", kernModule.PTX)
}
