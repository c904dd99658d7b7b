package compiler

// Warp collectives (shfl.sync, vote.sync; PTX ISA §9.7.8.6, §9.7.12.7)
// and block reductions built from them. All use the full member mask:
// the language requires every lane to call them together, and the
// uniformity check enforces it.

import (
	"math"

	"github.com/gokern/kern/compiler/ir"
)

var warpIntrinsics = map[string]intrinsicFunc{
	"ShflXor":  func(kb *kernelBuilder, c *icall) *val { return kb.shflCall(c, "bfly") },
	"ShflDown": func(kb *kernelBuilder, c *icall) *val { return kb.shflCall(c, "down") },
	"ShflUp":   func(kb *kernelBuilder, c *icall) *val { return kb.shflCall(c, "up") },
	"ShflIdx":  func(kb *kernelBuilder, c *icall) *val { return kb.shflCall(c, "idx") },
	"WarpSum":  func(kb *kernelBuilder, c *icall) *val { return kb.warpReduceCall(c, ir.OpAdd) },
	"WarpMax":  func(kb *kernelBuilder, c *icall) *val { return kb.warpReduceCall(c, ir.OpMax) },
	"WarpMin":  func(kb *kernelBuilder, c *icall) *val { return kb.warpReduceCall(c, ir.OpMin) },
	"Ballot": func(kb *kernelBuilder, c *icall) *val {
		kb.requireUniform(c, true)
		r := kb.b.New(ir.U32)
		kb.b.Emit(ir.OpVote, "vote.sync.ballot.b32", ir.R(r), ir.R(kb.reg(c.arg(1), ir.Pred)), ir.Imm(ir.S32, 0xffffffff))
		return scalar(r)
	},
	"Any":      func(kb *kernelBuilder, c *icall) *val { return kb.vote(c, "any") },
	"All":      func(kb *kernelBuilder, c *icall) *val { return kb.vote(c, "all") },
	"BlockSum": func(kb *kernelBuilder, c *icall) *val { return kb.blockReduce(c, ir.OpAdd) },
	"BlockMax": func(kb *kernelBuilder, c *icall) *val { return kb.blockReduce(c, ir.OpMax) },
	"BlockMin": func(kb *kernelBuilder, c *icall) *val { return kb.blockReduce(c, ir.OpMin) },
}

func (kb *kernelBuilder) vote(c *icall, mode string) *val {
	kb.requireUniform(c, true)
	r := kb.b.New(ir.Pred)
	kb.b.Emit(ir.OpVote, "vote.sync."+mode+".pred", ir.R(r), ir.R(kb.reg(c.arg(1), ir.Pred)), ir.Imm(ir.S32, 0xffffffff))
	return scalar(r)
}

func (kb *kernelBuilder) shflCall(c *icall, mode string) *val {
	kb.requireUniform(c, true)
	st := scalarType(c.elem)
	lane := kb.lane32(c.arg(2), scalarType(c.call.Call.Args[2].Type()))
	return scalar(kb.shfl(mode, st, c.arg(1), lane))
}

// lane32 converts a lane or delta operand to a .b32 operand.
func (kb *kernelBuilder) lane32(o ir.Operand, t ir.Type) ir.Operand {
	if o.Kind == ir.KImm {
		return ir.Imm(ir.U32, o.Imm&0xffffffff)
	}
	if t.Bits() == 64 {
		r := kb.b.New(ir.U32)
		kb.b.Cvt(ir.U32, ir.U64, "", r, o)
		return ir.R(r)
	}
	return o
}

// shfl moves one value of type st. The c operand is 31 (clamp to the
// warp) for idx, down and bfly and 0 for up, with segment mask 0, so the
// whole warp is one segment (PTX ISA §9.7.8.6). 64-bit values move as two
// 32-bit halves.
func (kb *kernelBuilder) shfl(mode string, st ir.Type, v, lane ir.Operand) ir.Reg {
	cval := uint64(31)
	if mode == "up" {
		cval = 0
	}
	x := kb.reg(v, st)
	r := kb.b.New(st)
	text := "shfl.sync." + mode + ".b32"
	if st.Bits() <= 32 {
		kb.b.Emit(ir.OpShfl, text, ir.R(r), ir.R(x), lane, ir.Imm(ir.U32, cval), ir.Imm(ir.S32, 0xffffffff))
		return r
	}
	lo, hi := kb.b.New(ir.B32), kb.b.New(ir.B32)
	kb.b.Emit(ir.OpMov, "mov.b64", ir.Vec(lo, hi), ir.R(x))
	lo2, hi2 := kb.b.New(ir.B32), kb.b.New(ir.B32)
	kb.b.Emit(ir.OpShfl, text, ir.R(lo2), ir.R(lo), lane, ir.Imm(ir.U32, cval), ir.Imm(ir.S32, 0xffffffff))
	kb.b.Emit(ir.OpShfl, text, ir.R(hi2), ir.R(hi), lane, ir.Imm(ir.U32, cval), ir.Imm(ir.S32, 0xffffffff))
	kb.b.Emit(ir.OpMov, "mov.b64", ir.R(r), ir.Vec(lo2, hi2))
	return r
}

func (kb *kernelBuilder) warpReduceCall(c *icall, op ir.Op) *val {
	kb.requireUniform(c, true)
	return scalar(kb.warpReduce(op, scalarType(c.elem), c.arg(1)))
}

// warpReduce is a butterfly over 16, 8, 4, 2, 1: every lane ends with the
// reduction of all 32, in the same order gpu.WarpSum's Go body uses.
func (kb *kernelBuilder) warpReduce(op ir.Op, st ir.Type, v ir.Operand) ir.Reg {
	acc := kb.reg(v, st)
	for m := 16; m > 0; m /= 2 {
		o := kb.shfl("bfly", st, ir.R(acc), ir.Imm(ir.U32, uint64(m)))
		n := kb.combine(op, st, ir.R(acc), ir.R(o))
		acc = n
	}
	return acc
}

func (kb *kernelBuilder) combine(op ir.Op, st ir.Type, a, b ir.Operand) ir.Reg {
	if op == ir.OpAdd {
		r := kb.b.New(st)
		kb.b.Arith(ir.OpAdd, st, r, a, b)
		return r
	}
	return kb.minMax(op == ir.OpMax, st, a, b, true)
}

// identity is the neutral element of op on st.
func identity(op ir.Op, st ir.Type) ir.Operand {
	switch op {
	case ir.OpAdd:
		return zeroOf(st)
	case ir.OpMax:
		switch {
		case st == ir.F32:
			return ir.Imm(ir.F32, uint64(math.Float32bits(float32(math.Inf(-1)))))
		case st == ir.F64:
			return ir.Imm(ir.F64, math.Float64bits(math.Inf(-1)))
		case st.IsSigned():
			return ir.Imm(st, uint64(1)<<(st.Bits()-1))
		}
		return ir.Imm(st, 0)
	}
	switch {
	case st == ir.F32:
		return ir.Imm(ir.F32, uint64(math.Float32bits(float32(math.Inf(1)))))
	case st == ir.F64:
		return ir.Imm(ir.F64, math.Float64bits(math.Inf(1)))
	case st.IsSigned():
		return ir.Imm(st, uint64(1)<<(st.Bits()-1)-1)
	}
	return ir.Imm(st, (uint64(1)<<(st.Bits()-1))*2-1)
}

// blockReduce: each warp reduces, lane 0 of each warp writes its partial
// to a 32-slot shared scratch, a barrier, then every warp reduces the
// partials itself (so no second broadcast is needed), and a final barrier
// lets the scratch be reused by the next reduction.
func (kb *kernelBuilder) blockReduce(c *icall, op ir.Op) *val {
	kb.requireUniform(c, false)
	st := scalarType(c.elem)
	scratch := kb.reductionScratch()
	part := kb.warpReduce(op, st, c.arg(1))
	// The generic linear index even under a 1-D block= (where it is
	// tid.x): with tid.x >> 5 here, ptxas 13.5 moved the tile kernels'
	// row-bound arithmetic off the uniform datapath and took
	// ops/internal/tilerow softmaxTile16* from 32 to 39-40 registers on
	// sm_90 (docs/performance.md, "Thread identity by the directive").
	lin := kb.linearGeneric()
	warp := kb.b.New(ir.U32)
	kb.b.Shift(ir.OpShr, ir.U32, warp, ir.R(lin), ir.Imm(ir.U32, 5))
	// The lane as lin & 31, not %laneid: the same value (a block's warps
	// are runs of 32 consecutive linear indices, PTX ISA "Thread
	// Hierarchy"), but ptxas keeps a %laneid read, once CSE'd between two
	// reductions, live through everything between them, beside the
	// linear index's tid.y and tid.z: examples/softmax and ops softmax3
	// on sm_90 (ptxas 13.5) 27 and 31 registers with it, 25 without.
	lane := kb.b.New(ir.U32)
	kb.b.Arith(ir.OpAnd, ir.B32, lane, ir.R(lin), ir.Imm(ir.U32, 31))
	base := kb.b.New(ir.U64)
	kb.b.Mov(ir.U64, base, ir.Sym(scratch.Name))
	slot := kb.b.New(ir.U64)
	// Slots are the element size apart, so the partials of up to 32 warps
	// sit in 32 distinct banks.
	size := uint64(memBytes(st))
	kb.b.Emit(ir.OpMad, "mad.wide.u32", ir.R(slot), ir.R(warp), ir.Imm(ir.U32, size), ir.R(base))
	isLane0 := kb.b.New(ir.Pred)
	kb.b.Setp(ir.EQ, ir.U32, isLane0, ir.R(lane), ir.Imm(ir.U32, 0))
	st8 := kb.b.B.Instrs
	kb.b.St(ir.Shared, st, ir.Addr(slot, 0), ir.R(part))
	in := kb.b.B.Instrs[len(st8)]
	in.Guarded, in.Guard = true, isLane0
	kb.b.Emit(ir.OpBar, "bar.sync", ir.Imm(ir.U32, 0))
	// nwarps = (ntid.x*ntid.y*ntid.z + 31) / 32
	n := kb.blockThreads()
	kb.b.Arith(ir.OpAdd, ir.U32, n, ir.R(n), ir.Imm(ir.U32, 31))
	kb.b.Shift(ir.OpShr, ir.U32, n, ir.R(n), ir.Imm(ir.U32, 5))
	has := kb.b.New(ir.Pred)
	kb.b.Setp(ir.LO, ir.U32, has, ir.R(lane), ir.R(n))
	mine := kb.b.New(ir.U64)
	kb.b.Emit(ir.OpMad, "mad.wide.u32", ir.R(mine), ir.R(lane), ir.Imm(ir.U32, size), ir.R(base))
	v := kb.b.New(st)
	kb.b.Mov(st, v, identity(op, st))
	ldStart := len(kb.b.B.Instrs)
	kb.b.Ld(ir.Shared, false, st, ir.R(v), ir.Addr(mine, 0))
	ld := kb.b.B.Instrs[ldStart]
	ld.Guarded, ld.Guard = true, has
	total := kb.warpReduce(op, st, ir.R(v))
	kb.b.Emit(ir.OpBar, "bar.sync", ir.Imm(ir.U32, 0))
	return scalar(total)
}

func (kb *kernelBuilder) reductionScratch() *ir.Var {
	for _, v := range kb.f.Vars {
		if v.Name == "kern_reduce" {
			return v
		}
	}
	v := &ir.Var{Name: "kern_reduce", Space: ir.Shared, Align: 8, Size: 32 * 8}
	kb.f.Vars = append(kb.f.Vars, v)
	return v
}
