package compiler

// gpu.Clock64: the SM's cycle counter, a mov from %clock64 (PTX ISA,
// "Special Registers": a 64-bit counter, sm_20 on). A read is an
// instruction of its own in the IR, never rematerialized (ir/remat.go
// takes only the thread-constant specials) and never moved past a memory
// access by a pass of kern's; ptxas keeps clock reads in order too.

import "github.com/gokern/kern/compiler/ir"

var clockIntrinsics = map[string]intrinsicFunc{
	"Clock64": func(kb *kernelBuilder, c *icall) *val {
		r := kb.b.New(ir.U64)
		kb.b.Mov(ir.U64, r, ir.Special("%clock64"))
		s := kb.b.New(ir.S64)
		kb.b.Cvt(ir.S64, ir.U64, "", s, ir.R(r))
		return scalar(s)
	},
}
