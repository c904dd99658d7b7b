package compiler

// setmaxnreg (PTX ISA §9.7.17.1, "setmaxnreg"), PTX 8.0, sm_90a only: a
// warpgroup's register count moves between warpgroups of a
// warp-specialised kernel (gpu/setmaxnreg.go). The count is an immediate
// operand, so it must be a Go constant; ptxas refuses any other count
// than a multiple of 8 in 24..256, and so does the compiler, at the
// call's position.

import "github.com/gokern/kern/compiler/ir"

var setmaxnregIntrinsics = map[string]intrinsicFunc{
	"SetMaxNRegInc": func(kb *kernelBuilder, c *icall) *val { return kb.setmaxnreg(c, "inc") },
	"SetMaxNRegDec": func(kb *kernelBuilder, c *icall) *val { return kb.setmaxnreg(c, "dec") },
}

func (kb *kernelBuilder) setmaxnreg(c *icall, dir string) *val {
	n, ok := c.constArg(1)
	if !ok || n < 24 || n > 256 || n%8 != 0 {
		kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.%s needs a constant register count, a multiple of 8 in 24..256", c.name)
		return &val{origin: -1}
	}
	kb.requireUniform(c, true)
	if kb.tgt.name != "sm_90a" {
		kb.d.errorf(c.call.Pos(), UnsupportedTarget, "gpu.%s (setmaxnreg) needs sm_90a; compiling for %s (//kern:arch sm_90a, or kern gen -arch sm_90a)", c.name, kb.tgt.name)
		return &val{origin: -1}
	}
	kb.version = max(kb.version, 80)
	kb.b.Emit(ir.OpSetmaxnreg, "setmaxnreg."+dir+".sync.aligned.u32", ir.Imm(ir.U32, uint64(n)))
	return &val{origin: -1}
}
