package compiler

// Lowering of a hoisted loop (hoist.go): the limit computed on the entry
// edge, the header's test against it, and the exit edge's cold block that
// reports the access the next iteration would fault on.

import (
	"go/token"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// emitHoistEntry computes limit on the loop's entry edge, before the phi
// moves (it reads iv0 as the entry edge passes it).
func (kb *kernelBuilder) emitHoistEntry(fr *frame, pl *hoistLoop) {
	kb.hoistRegs(pl)
	iv0 := kb.value(fr, pl.iv.Edges[pl.entryI]).ops[0]
	if pl.allProven() {
		kb.emitProvenPointers(fr, pl, iv0)
		return
	}
	bound := kb.emitInvariant(fr, pl, pl.bound)
	if kb.limit32(fr, pl, iv0, bound) {
		kb.anchorStep(fr, pl, bound)
		if pl.pure {
			kb.emitPureEntry(fr, pl, iv0, bound)
		}
		return
	}
	kb.b.Mov(ir.S64, pl.limit, bound)
	kb.emitProvenPointers(fr, pl, iv0)
	for _, g := range pl.groups {
		if g.proven {
			continue
		}
		base := kb.emitBase(fr, pl, g)
		n := kb.value(fr, g.x).ops[1]
		// first = iv0+b+cmin, the smallest index of the group's first
		// iteration; the group is safe while iv < len-b-cmax, if first
		// is in range, else it faults in the first iteration.
		last := kb.b.New(ir.S64)
		kb.b.Arith(ir.OpSub, ir.S64, last, n, kb.add64(base, ir.Imm(ir.S64, uint64(g.cmax))))
		if !g.nonNeg {
			first := kb.add64(kb.add64(base, ir.Imm(ir.S64, uint64(g.cmin))), iv0)
			ok := kb.b.New(ir.Pred)
			kb.b.Setp(ir.LO, ir.U64, ok, ir.R(kb.reg(first, ir.S64)), n)
			kb.b.Selp(ir.S64, last, ir.R(last), iv0, ok)
		}
		kb.b.Arith(ir.OpMin, ir.S64, pl.limit, ir.R(pl.limit), ir.R(last))
		kb.emitHoistPointer(fr, g, base, iv0)
	}
	kb.anchorStep(fr, pl, bound)
	if pl.pure {
		kb.emitPureEntry(fr, pl, iv0, bound)
	}
}

// emitProvenPointers sets the pointers of the groups a launch fact
// proves (launchfact.go): they take no part in the limit.
func (kb *kernelBuilder) emitProvenPointers(fr *frame, pl *hoistLoop, iv0 ir.Operand) {
	for _, g := range pl.groups {
		if g.proven {
			kb.emitHoistPointer(fr, g, kb.emitBase(fr, pl, g), iv0)
		}
	}
}

// anchorStep makes the limit depend on a step computed before the loop:
// limit = min(limit, N|s), which changes nothing: limit ≤ N ≤ N|s, as
// s ≥ 0 (planLoop) and setting bits raises any int. Without a use before
// the loop, ptxas sinks the step's computation (a grid-stride
// loop's GridDim·BlockDim) past the loop's first test; since that test's
// exit leads to the cold block rather than straight to exit, what follows
// it may be divergent, so the step leaves the uniform registers for vector
// registers live through the whole loop, and past calls such as the
// division slow path that then clobber more (SiluGate on sm_80: 22
// registers instead of 16, ptxas 12.4 and 13.5). Used here, in the entry
// edge's uniform arithmetic on the bound, it stays uniform. N|s, not N+s
// (which may wrap) nor max(N, s) (2 more SASS). Only an arithmetic step
// needs it: a step read straight from a parameter or t.BlockDim() is a constant-bank operand
// that occupies no register (RMSNorm: the anchor only added 10 SASS).
func (kb *kernelBuilder) anchorStep(fr *frame, pl *hoistLoop, bound ir.Operand) {
	if _, isArith := pl.step.(*ssa.BinOp); !isArith || !pl.outside(pl.step) {
		return
	}
	s := kb.value(fr, pl.step).ops[0]
	if s.Kind == ir.KImm {
		return
	}
	t := kb.b.New(ir.S64)
	kb.b.Arith(ir.OpOr, ir.B64, t, bound, s)
	kb.b.Arith(ir.OpMin, ir.S64, pl.limit, ir.R(pl.limit), ir.R(t))
}

// hoistRegs allocates the register the entry edge sets and the header
// reads.
func (kb *kernelBuilder) hoistRegs(pl *hoistLoop) {
	if pl.limit < 0 {
		pl.limit = kb.b.New(ir.S64)
	}
}

// emitBase computes a group's b, the sum of its invariant terms. The cold
// block reads b+iv off the group's pointer where it has one (coldIndex),
// else computes b again rather than keep it live through the loop.
func (kb *kernelBuilder) emitBase(fr *frame, pl *hoistLoop, g *hoistGroup) ir.Operand {
	base := ir.Imm(ir.S64, 0)
	for _, t := range g.terms {
		v := kb.emitInvariant(fr, pl, t.v)
		if !t.neg {
			base = kb.add64(base, v)
			continue
		}
		r := kb.b.New(ir.S64)
		kb.b.Arith(ir.OpSub, ir.S64, r, base, v)
		base = ir.R(r)
	}
	return base
}

// add64 returns x+y, folding constants.
func (kb *kernelBuilder) add64(x, y ir.Operand) ir.Operand {
	switch {
	case x.Kind == ir.KImm && y.Kind == ir.KImm:
		return ir.Imm(ir.S64, x.Imm+y.Imm)
	case y.Kind == ir.KImm && y.Imm == 0:
		return x
	case x.Kind == ir.KImm && x.Imm == 0:
		return y
	}
	r := kb.b.New(ir.S64)
	kb.b.Arith(ir.OpAdd, ir.S64, r, x, y)
	return ir.R(r)
}

// emitInvariant computes an invariant term (hoistLoop.invariant) before
// the loop: values defined outside it are already lowered; the +, - and *
// the loop body computes from them are recomputed here.
func (kb *kernelBuilder) emitInvariant(fr *frame, pl *hoistLoop, v ssa.Value) ir.Operand {
	if pl.outside(v) {
		return kb.value(fr, v).ops[0]
	}
	if c, ok := v.(*ssa.Call); ok {
		return kb.value(fr, c.Call.Args[0]).ops[1] // len
	}
	b := v.(*ssa.BinOp)
	x, y := kb.emitInvariant(fr, pl, b.X), kb.emitInvariant(fr, pl, b.Y)
	op := map[token.Token]ir.Op{token.ADD: ir.OpAdd, token.SUB: ir.OpSub, token.MUL: ir.OpMul}[b.Op]
	if v := kb.narrowArithAt(fr, b, pl.entry, op, ir.S64, x, y); v != nil {
		return v.ops[0] // a 32-bit entry (index32.go)
	}
	r := kb.b.New(ir.S64)
	kb.b.Arith(op, ir.S64, r, x, y)
	return ir.R(r)
}

// emitHoistIf lowers the header's branch: continue while iv < limit; on
// leaving, iv < N means an access of this iteration is out of range, so
// the cold block reports it.
func (kb *kernelBuilder) emitHoistIf(fr *frame, pl *hoistLoop) {
	h := pl.header
	kb.hoistRegs(pl)
	iv := kb.phiVal(fr, pl.iv).ops[0]
	cond := kb.b.New(ir.Pred)
	kb.b.Pos = pl.header.Instrs[len(pl.header.Instrs)-1].(*ssa.If).Cond.Pos()
	if pl.allProven() {
		// Nothing to test: the loop runs while iv < N, as the source says.
		kb.b.Setp(ir.LT, ir.S64, cond, iv, kb.value(fr, pl.bound).ops[0])
		fr.reach(h.Succs[0])
		kb.b.BraIf(cond, false, fr.blocks[h.Succs[0].Index])
		exit := kb.f.NewBlock("for_exit")
		kb.b.Bra(exit)
		kb.b.B = exit
		kb.edge(fr, h, h.Succs[1])
		return
	}
	limit := ir.R(pl.limit)
	if pl.pure {
		limit = kb.value(fr, pl.bound).ops[0] // the entry edge tested the rest
	}
	kb.b.Setp(ir.LT, ir.S64, cond, iv, limit)
	exit := kb.f.NewBlock("hoisted_exit")
	cold := kb.hoistCold(pl)
	// The body has no phis and no other way in (planLoop).
	fr.reach(h.Succs[0])
	kb.b.BraIf(cond, false, fr.blocks[h.Succs[0].Index])
	kb.b.Bra(exit)
	saved, savedPos := kb.b.B, kb.b.Pos

	kb.b.B = exit
	if !pl.pure {
		early := kb.b.New(ir.Pred)
		kb.b.Setp(ir.LT, ir.S64, early, iv, kb.value(fr, pl.bound).ops[0])
		kb.b.BraIf(early, false, cold)
	}
	kb.edge(fr, h, h.Succs[1])

	// The checks of the faulting iteration, in program order; one fails,
	// so the last needs no test: iv < N and iv ≥ limit, so the limit is
	// below N and is some group's bound, which this iv passes (iv ≥
	// len−b−cmax: its cmax access fails) or which is iv0 (the group's
	// first index is out of range, the loop did not run and iv = iv0: its
	// cmin access fails, the entry edge's test being this one's).
	// Reaching the last access, every earlier one has passed, so it is the
	// one that fails.
	kb.b.B = cold
	bases := map[*hoistGroup]ir.Operand{}
	var lenOf ssa.Value // the slice whose length the length register holds
	// Accesses a launch fact proves (launchfact.go) set no limit: they
	// are not among the checks, and the last is the last of the others.
	last := -1
	for i, a := range pl.access {
		if !a.g.proven {
			last = i
		}
	}
	if last < 0 {
		kb.b.Exit() // not reached: no group sets a limit
	}
	for i, a := range pl.access {
		if a.g.proven {
			continue
		}
		kb.b.Pos = a.ia.Pos()
		at, ok := bases[a.g] // b+iv
		if !ok {
			at = kb.coldIndex(fr, pl, a.g, iv)
			bases[a.g] = at
		}
		// The index and length go straight to the failure registers,
		// so each site's block only names the site; the checks run in
		// one straight line, so the length is moved only when the
		// slice changes (2 SASS per check less in MatMulMMA's 12).
		kb.failHandler()
		idx, n := kb.failRegs[1], kb.failRegs[2]
		kb.b.Mov(ir.S64, idx, kb.add64(at, ir.Imm(ir.S64, uint64(a.c))))
		if a.g.x != lenOf {
			kb.b.Mov(ir.S64, n, kb.value(fr, a.g.x).ops[1])
			lenOf = a.g.x
		}
		// The site code too is set before the check, and a failing
		// check branches to the handler itself: this straight line runs
		// only on a faulting iteration, so it need not keep the code's
		// move off the passing path, and no site needs a block of its own.
		site := kb.addSite(kb.posString(a.ia.Pos()))
		kb.b.Mov(ir.U32, kb.failRegs[0], ir.Imm(ir.U32, kb.siteCode(site)))
		if i == last {
			kb.b.Bra(kb.failHandler())
			break
		}
		p := kb.b.New(ir.Pred)
		kb.b.Setp(ir.HS, ir.U64, p, ir.R(idx), ir.R(n))
		kb.b.BraIf(p, false, kb.failHandler())
	}
	kb.b.B, kb.b.Pos = saved, savedPos
}
