package compiler

// MN-major (transposed) wgmma operands: gpu.WGMMA{F16,BF16}[RegA]Major
// lower to wgmma.mma_async with imm-trans-a / imm-trans-b set from the
// constant gpu.Major arguments (PTX ISA §9.7.15, "wgmma.mma_async":
// imm-trans is an immediate, 0 K-major, 1 transposed, allowed only for
// .f16/.bf16 operands in shared memory). The layouts are in
// gpu/wgmma_major.go.

var wgmmaMajorIntrinsics = map[string]intrinsicFunc{
	"WGMMAF16Major":      func(kb *kernelBuilder, c *icall) *val { return kb.wgmmaMajor(c, "f16", false) },
	"WGMMABF16Major":     func(kb *kernelBuilder, c *icall) *val { return kb.wgmmaMajor(c, "bf16", false) },
	"WGMMAF16RegAMajor":  func(kb *kernelBuilder, c *icall) *val { return kb.wgmmaMajor(c, "f16", true) },
	"WGMMABF16RegAMajor": func(kb *kernelBuilder, c *icall) *val { return kb.wgmmaMajor(c, "bf16", true) },
}

// wgmmaMajor reads the layout arguments: (t, acc, a, b, accumulate,
// aMajor, bMajor), or (t, acc, a, b, accumulate, bMajor) for register A.
func (kb *kernelBuilder) wgmmaMajor(c *icall, typ string, regA bool) *val {
	major := func(i int) (uint64, bool) {
		m, ok := c.constArg(i)
		if !ok || m < 0 || m > 1 {
			kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.%s: argument %d must be the constant gpu.KMajor or gpu.MNMajor (an immediate of the instruction)", c.name, i)
			return 0, false
		}
		return uint64(m), true
	}
	var ta, tb uint64
	ok := true
	if regA {
		tb, ok = major(5)
	} else {
		var ok2 bool
		ta, ok = major(5)
		tb, ok2 = major(6)
		ok = ok && ok2
	}
	if !ok {
		return &val{origin: -1}
	}
	return kb.wgmmaTrans(c, typ, regA, ta, tb)
}
