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
//
// The cold block (hoist_lower.go) reports the faulting index b+iv+c. With
// a pointer it reads b+iv off it, (p − &x[0]) / size, rather than compute
// b again from its terms: recomputed, the terms' operands (matmulWarp's
// row and column, each a 64-bit quotient) stay live through the whole
// loop only for the cold block, and ptxas keeps them in registers beside
// the unrolled loop's loads in flight (qwen3 matmulF32, ptxas 13.5 sm_80:
// 30 → 26 registers). &x[0] is the slice's own pointer, a parameter's
// constant-bank operand for ptxas in the usual case.

import (
	"math/bits"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

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

// coldFromPointer reports whether the cold block reads group g's b+iv
// off its pointer: it has one, the element size is a power of two, so
// the byte offset's shift is exact, and some term is arithmetic the loop
// body computes (r*k in x[r*k+j]), whose operands the recomputation
// would keep live. A term computed before the loop (softmax3's base) is
// one value its later uses keep live anyway; there the pointer form
// cost ptxas 13.5 a register on sm_90 (31 → 32).
func coldFromPointer(pl *hoistLoop, g *hoistGroup) bool {
	if g.ptr < 0 || g.size <= 0 || g.size&(g.size-1) != 0 {
		return false
	}
	for _, t := range g.terms {
		if _, arith := t.v.(*ssa.BinOp); arith && !pl.outside(t.v) {
			return true
		}
	}
	return false
}

// coldIndex returns b+iv of group g in the cold block: (p − &x[0]) >>
// log2(size) for a group with a pointer (coldFromPointer), arithmetic so
// that a negative first index (a group whose first access faults below
// 0) comes out as the per-access lowering reports it.
func (kb *kernelBuilder) coldIndex(fr *frame, pl *hoistLoop, g *hoistGroup, iv ir.Operand) ir.Operand {
	if !coldFromPointer(pl, g) {
		return kb.add64(kb.emitBase(fr, pl, g), iv)
	}
	r := kb.b.New(ir.S64)
	kb.b.Arith(ir.OpSub, ir.S64, r, ir.R(g.ptr), kb.value(fr, g.x).ops[0])
	if sh := bits.TrailingZeros64(uint64(g.size)); sh > 0 {
		kb.b.Shift(ir.OpShr, ir.S64, r, ir.R(r), ir.Imm(ir.U32, uint64(sh)))
	}
	return ir.R(r)
}

// advanceColdPointers moves the pointers of the groups coldIndex reads
// by d iterations' worth of elements (d already a multiple of the step):
// a pure loop's entry edge (hoist_pure.go) sends iv = iv0+d to the cold
// block without running the loop, so p must be &x[iv0+d+b] there too.
func (kb *kernelBuilder) advanceColdPointers(pl *hoistLoop, d ir.Operand) {
	for _, g := range pl.groups {
		if g.proven || !coldFromPointer(pl, g) {
			continue
		}
		off := d
		if sh := bits.TrailingZeros64(uint64(g.size)); sh > 0 {
			r := kb.b.New(ir.S64)
			kb.b.Shift(ir.OpShl, ir.B64, r, d, ir.Imm(ir.U32, uint64(sh)))
			off = ir.R(r)
		}
		kb.b.Arith(ir.OpAdd, ir.S64, g.ptr, ir.R(g.ptr), off)
	}
}
