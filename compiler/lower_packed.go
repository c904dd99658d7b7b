package compiler

// Packed 16-bit float arithmetic (gpu.FMA2, Add2, Sub2, Mul2 on Half2 and
// BFloat162; PTX ISA §9.7.4.1-§9.7.4.4), the byte permute gpu.Prmt
// (§9.7.8.7) and the int8 dot product gpu.Dp4a (§9.7.1.23). Packed operands live in .b32 registers, which the f16x2 and
// bf16x2 forms require, so constants are moved into registers first. sm_80
// has only fma among the bf16x2 forms (add, sub and mul need sm_90): those
// become an fma with 1, -1 or -0, which rounds the same exact value once.

import (
	"go/types"

	"github.com/gokern/kern/compiler/ir"
)

var packedIntrinsics = map[string]intrinsicFunc{
	"FMA2": func(kb *kernelBuilder, c *icall) *val {
		return kb.packed2(c, "fma", c.arg(0), c.arg(1), c.arg(2))
	},
	"Mul2": func(kb *kernelBuilder, c *icall) *val {
		if kb.packedBF16(c) {
			return kb.packed2(c, "fma", c.arg(0), c.arg(1), ir.Imm(ir.U32, 0x80008000)) // -0 keeps a -0 product
		}
		return kb.packed2(c, "mul", c.arg(0), c.arg(1))
	},
	"Add2": func(kb *kernelBuilder, c *icall) *val {
		if kb.packedBF16(c) {
			return kb.packed2(c, "fma", c.arg(0), ir.Imm(ir.U32, 0x3f803f80), c.arg(1))
		}
		return kb.packed2(c, "add", c.arg(0), c.arg(1))
	},
	"Sub2": func(kb *kernelBuilder, c *icall) *val {
		if kb.packedBF16(c) {
			return kb.packed2(c, "fma", c.arg(1), ir.Imm(ir.U32, 0xbf80bf80), c.arg(0))
		}
		return kb.packed2(c, "sub", c.arg(0), c.arg(1))
	},
	"Prmt": func(kb *kernelBuilder, c *icall) *val {
		r := kb.b.New(ir.U32)
		kb.b.Prmt(r, ir.R(kb.reg(c.arg(0), ir.U32)), ir.R(kb.reg(c.arg(1), ir.U32)), c.arg(2))
		return scalar(r)
	},
	"Dp4a": func(kb *kernelBuilder, c *icall) *val {
		r := kb.b.New(ir.S32)
		kb.b.Dp4a(r, ir.R(kb.reg(c.arg(0), ir.U32)), ir.R(kb.reg(c.arg(1), ir.U32)), ir.R(kb.reg(c.arg(2), ir.S32)))
		return scalar(r)
	},
}

// packedBF16 reports whether the call's type argument is gpu.BFloat162.
func (kb *kernelBuilder) packedBF16(c *icall) bool {
	n, ok := types.Unalias(c.elem).(*types.Named)
	return ok && n.Obj().Name() == "BFloat162"
}

// packed2 emits op.rn.f16x2 or op.rn.bf16x2 on the operands, each in a
// register.
func (kb *kernelBuilder) packed2(c *icall, op string, args ...ir.Operand) *val {
	t := "f16x2"
	if kb.packedBF16(c) {
		t = "bf16x2"
		if !kb.need(c.call.Pos(), "gpu."+c.name+" on BFloat162 (fma.rn.bf16x2)", 70, 80) {
			return kb.zeroVal(c.call.Type())
		}
	}
	r := kb.b.New(ir.U32)
	regs := make([]ir.Operand, len(args))
	for i, a := range args {
		regs[i] = ir.R(kb.reg(a, ir.U32))
	}
	kb.b.Packed2(op, t, r, regs...)
	return scalar(r)
}
