package compiler

// Short-circuit conditions as one predicate.
//
// go/ssa lowers `if a && b { X }` to two branches: the block testing a
// jumps to a block that computes and tests b, and both tests' false edges
// lead to the same join. On the GPU each branch is a BSSY/BSYNC region in
// SASS, and ptxas does not turn a guarded region into predicated code
// when its condition is spread over two blocks, so an edge-tile load
// `if row < m && col < k { v = a[row*k+col] }` costs two branches, two
// register moves for the default value and the reconvergence around each
// (MatMul32, 8 such loads per K tile). Clang emits `and.pred` and a single
// branch; so does this: when the block b's test enters (its true
// successor) is entered only from b, computes nothing that can fault or be
// observed, and ends in a test whose false edge goes where b's does with
// the same values for the join's phis, that block's instructions are
// lowered into b (speculated: they are cheap integer arithmetic and
// comparisons), the two conditions are and-ed, and one branch goes to the
// second test's true successor. Chains (`a && b && c`) merge one block at
// a time.
//
// Exact: the speculated instructions have no effect and cannot fault (no
// division, no variable shift, no memory access, no call but len), so
// running them when a is false changes nothing, and the branch goes where
// the two branches went: to X iff a and b, else to the join, whose phis
// take the same values from either false edge.

import (
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// maxSpeculated bounds the instructions one merged block may speculate.
const maxSpeculated = 8

// andChain returns the blocks that b's If can absorb, in order: each the
// true successor of the one before (of b first), entered only from it,
// speculatable, and ending in an If whose false successor is b's with the
// same phi values.
func (kb *kernelBuilder) andChain(fr *frame, b *ssa.BasicBlock) []*ssa.BasicBlock {
	if kb.cfg.KeepChecks {
		return nil // the reference lowers each test on its own
	}
	var chain []*ssa.BasicBlock
	fb := b.Succs[1]
	for cur := b; ; {
		tb := cur.Succs[0]
		if tb == fb || len(tb.Preds) != 1 || tb.Preds[0] != cur || len(tb.Succs) != 2 || tb.Succs[1] != fb || tb.Succs[0] == fb {
			return chain
		}
		if fr.unrolled[tb] != nil || fr.partial[tb] != nil || fr.hoists[tb] != nil || fr.backEdge(cur, tb) != nil {
			return chain
		}
		if !speculatable(tb) || !samePhiValues(fb, b, tb) {
			return chain
		}
		chain = append(chain, tb)
		cur = tb
	}
}

// speculatable reports whether b, apart from its final If, only computes
// values with no effect that cannot fault.
func speculatable(b *ssa.BasicBlock) bool {
	n := 0
	for _, instr := range b.Instrs[:len(b.Instrs)-1] {
		if _, ok := instr.(*ssa.DebugRef); ok {
			continue
		}
		if !speculatableInstr(instr) {
			return false
		}
		n++
	}
	_, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If)
	return ok && n <= maxSpeculated
}

// speculatableInstr reports whether instr computes a value with no effect
// and cannot fault: arithmetic other than division and variable shifts,
// numeric conversions, negation and len.
func speculatableInstr(instr ssa.Instruction) bool {
	switch in := instr.(type) {
	case *ssa.DebugRef:
		return true
	case *ssa.BinOp:
		return harmlessBinOp(in)
	case *ssa.UnOp:
		return in.Op == token.NOT || in.Op == token.SUB || in.Op == token.XOR
	case *ssa.Convert:
		return basicNumeric(in.X.Type()) && basicNumeric(in.Type())
	case *ssa.Call:
		return isLenCall(in)
	}
	return false
}

// basicNumeric reports whether t is an integer, float or boolean type.
func basicNumeric(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&(types.IsInteger|types.IsFloat|types.IsBoolean) != 0
}

// samePhiValues reports whether every phi of join takes the same value
// on its edges from a and from b.
func samePhiValues(join, a, b *ssa.BasicBlock) bool {
	ia, ib := -1, -1
	for i, p := range join.Preds {
		switch p {
		case a:
			ia = i
		case b:
			ib = i
		}
	}
	if ia < 0 || ib < 0 {
		return false
	}
	for _, instr := range join.Instrs {
		p, ok := instr.(*ssa.Phi)
		if !ok {
			break
		}
		if !sameEdgeValue(p.Edges[ia], p.Edges[ib]) {
			return false
		}
	}
	return true
}

// sameEdgeValue reports whether x and y are the same value: one SSA
// value, or equal constants of one type (go/ssa makes a constant per
// use).
func sameEdgeValue(x, y ssa.Value) bool {
	if x == y {
		return true
	}
	cx, ok1 := x.(*ssa.Const)
	cy, ok2 := y.(*ssa.Const)
	if !ok1 || !ok2 || !types.Identical(cx.Type(), cy.Type()) {
		return false
	}
	if cx.Value == nil || cy.Value == nil {
		return cx.Value == nil && cy.Value == nil
	}
	if cx.Value.Kind() != cy.Value.Kind() {
		return false
	}
	// Exact values: a Go constant has no negative zero.
	return constant.Compare(cx.Value, token.EQL, cy.Value)
}

// lowerAndChain lowers b's If together with the blocks of chain (from
// andChain): their instructions here, one predicate, one branch.
func (kb *kernelBuilder) lowerAndChain(fr *frame, b *ssa.BasicBlock, cond ir.Reg, chain []*ssa.BasicBlock) {
	if fr.merged == nil {
		fr.merged = map[*ssa.BasicBlock]bool{}
	}
	for _, tb := range chain {
		fr.merged[tb] = true
		for _, instr := range tb.Instrs[:len(tb.Instrs)-1] {
			kb.b.Pos = instr.Pos()
			kb.lowerInstr(fr, instr)
		}
		in := tb.Instrs[len(tb.Instrs)-1].(*ssa.If)
		kb.b.Pos = in.Pos()
		c := kb.value(fr, in.Cond).ops[0]
		if c.Kind == ir.KImm {
			if c.Imm&1 == 0 {
				cond = -1 // never true
				break
			}
			continue
		}
		p := kb.b.New(ir.Pred)
		kb.b.Arith(ir.OpAnd, ir.Pred, p, ir.R(cond), c)
		cond = p
	}
	last := chain[len(chain)-1]
	fb := b.Succs[1]
	if cond < 0 {
		kb.edge(fr, b, fb)
		return
	}
	kb.liftChecks(fr, last.Succs[0], fb, cond)
	t := kb.ifTarget(fr, last, last.Succs[0])
	f := kb.ifTarget(fr, b, fb)
	kb.b.BraIf(cond, false, t)
	kb.b.Bra(f)
}

// ifTarget is where a conditional branch from `from` to s jumps: s's
// block, or an edge block with the moves for s's phis.
func (kb *kernelBuilder) ifTarget(fr *frame, from, s *ssa.BasicBlock) *ir.Block {
	if !hasPhis(s) && fr.backEdge(from, s) == nil {
		fr.reach(s)
		return fr.blocks[s.Index]
	}
	e := kb.f.NewBlock("edge")
	saved := kb.b.B
	kb.b.B = e
	kb.edge(fr, from, s)
	kb.b.B = saved
	return e
}
