package compiler

// Strength reduction of the addresses of hoisted accesses (hoist.go).
// Lowered one by one, x[iv+b+c] costs a 64-bit multiply-add, a shift and
// an add every iteration (ptxas keeps the multiply by a run-time stride
// such as row*k inside the loop). A hoisted loop already knows each
// access as iv plus an invariant, so each group of accesses gets a
// pointer register instead:
//
//	p = &x[iv0+b]          on the entry edge
//	&x[iv+b+c] = p + c·size  in the body (ptxas folds c·size into the load)
//	p += s·size            on the back edge, beside iv += s
//
// p is a plain mutable register (the IR is not SSA): the entry and back
// edges are the header's only ways in, so on entry to the body it holds
// &x[iv+b] for the current iv. The body is entered only with iv < limit,
// where every hoisted index is in range, so p+c·size is the address the
// per-access lowering would compute.
//
// A group indexed by iv alone (b = 0) keeps the per-access address: it is
// one shift-and-add off iv, which the loop keeps for its test anyway,
// where a pointer would add an increment and a live register.

import "github.com/gokern/kern/compiler/ir"

// emitHoistPointer sets each group's pointer on the entry edge, from b
// (computed by emitHoistEntry) and iv0.
func (kb *kernelBuilder) emitHoistPointer(fr *frame, g *hoistGroup, base, iv0 ir.Operand) {
	if len(g.terms) == 0 {
		return
	}
	if g.ptr < 0 {
		g.ptr = kb.b.New(ir.U64)
	}
	x := kb.value(fr, g.x)
	p := kb.addOffset(x.ops[0], ir.R(kb.reg(kb.add64(base, iv0), ir.S64)), g.size)
	kb.b.Mov(ir.U64, g.ptr, p)
}

// emitHoistStep advances the pointers on the back edge: p += s·size.
func (kb *kernelBuilder) emitHoistStep(fr *frame, pl *hoistLoop) {
	s := kb.value(fr, pl.step).ops[0]
	for _, g := range pl.groups {
		if g.ptr < 0 {
			continue
		}
		kb.b.Arith(ir.OpAdd, ir.S64, g.ptr, ir.R(g.ptr), kb.scaled(s, g.size))
	}
}

// scaled returns i·size, folding a constant i.
func (kb *kernelBuilder) scaled(i ir.Operand, size int64) ir.Operand {
	if i.Kind == ir.KImm {
		return ir.Imm(ir.S64, uint64(int64(i.Imm)*size))
	}
	r := kb.b.New(ir.S64)
	kb.b.Arith(ir.OpMul, ir.S64, r, i, ir.Imm(ir.S64, uint64(size)))
	return ir.R(r)
}

// hoistedAddr is the address of hoisted access ia: its group's pointer
// plus c·size.
func (kb *kernelBuilder) hoistedAddr(a hoistAccess) ir.Operand {
	return kb.add64(ir.R(a.g.ptr), ir.Imm(ir.S64, uint64(a.c*a.g.size)))
}
