package compiler

// Partial unrolling for //kern:unroll N, on loops whose trip count is not
// a constant: `for i := c; i < n; i += s` with n invariant in the loop and
// s a positive constant (the k loop of a matmul, with its mma, ldmatrix
// and cp.async).
//
// The loop's blocks are lowered 2N−1 times, as unroll.go does, but the
// counter stays a register:
//
//	guard:  if i+(N−1)·s < n, without wrapping, goto copy0 else rest0
//	copy0 … copyN−1: the body, without the test; each back edge assigns
//	        the header's phis and jumps to the next copy, the last one to
//	        the guard
//	rest0 … restN−2: the loop's test and body as written; each back edge
//	        jumps to the next, the last one to the guard
//
// The rest copies run the last < N iterations; they end at the guard
// rather than the loop's exit only for a counter that wraps around
// (Go's loop then goes on, and so does this one). The copies of the
// main part are then the one innermost loop, as in clang's unrolling.
//
// Every copy runs an iteration the original loop runs (the guard proves
// the N tests it drops would pass: i < i+s < … < i+(N−1)·s < n), in the
// same order, so the semantics, bounds checks included, are unchanged;
// the range analysis' facts, proved on SSA, hold in each copy. A break
// leaves from any copy to the loop's exit as before. What it buys is N−1
// fewer compares and branches per N iterations, and straight-line code
// over N iterations that ptxas can schedule (loads of the next iteration
// issued before the mma of this one) and address with immediate offsets.

import (
	"go/ast"
	"go/token"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// maxUnrollBy bounds the factor of //kern:unroll N.
const maxUnrollBy = 16

// partialLoop is a loop marked //kern:unroll N, found in SSA.
type partialLoop struct {
	header *ssa.BasicBlock
	blocks map[*ssa.BasicBlock]bool
	ind    *ssa.Phi
	bound  ssa.Value
	step   int64
	factor int
	pos    token.Pos // the for statement
	// During lowering: whether the header's test is left out (in the
	// copies), and where the back edge goes.
	skipTest bool
	backTo   *ir.Block
}

// findPartial locates the SSA loops of fn marked //kern:unroll N.
func (c *pkgCtx) findPartial(fn *ssa.Function) map[*ssa.BasicBlock]*partialLoop {
	if len(c.unrollBy) == 0 || fn.Syntax() == nil {
		return nil
	}
	out := map[*ssa.BasicBlock]*partialLoop{}
	ast.Inspect(fn.Syntax(), func(n ast.Node) bool {
		s, ok := n.(*ast.ForStmt)
		if !ok || c.unrollBy[s.Pos()] == 0 {
			return true
		}
		if l := c.partialOf(fn, s); l != nil {
			l.factor, l.pos = c.unrollBy[s.Pos()], s.Pos()
			out[l.header] = l
		} else {
			c.d.errorf(s.Pos(), BadUnroll, "//kern:unroll N: cannot unroll this loop by N: it must be `for i := a; i < n; i += c` (or i++) with n not changed in the loop, c a positive constant, and nothing but the test in the loop's condition")
		}
		return true
	})
	return out
}

// partialOf matches the loop of s: its header holds only phis and the
// test i < n of the induction phi i against a value defined outside the
// loop, and i steps by a positive constant on its back edge.
func (c *pkgCtx) partialOf(fn *ssa.Function, s *ast.ForStmt) *partialLoop {
	be, ok := s.Cond.(*ast.BinaryExpr)
	if !ok || s.Init == nil || s.Post == nil {
		return nil
	}
	for _, h := range fn.Blocks {
		if h.Comment != "for.loop" || !blockHasPos(h, be.OpPos) {
			continue
		}
		l := &partialLoop{header: h, blocks: map[*ssa.BasicBlock]bool{h: true}}
		var work []*ssa.BasicBlock
		for _, p := range h.Preds {
			if h.Dominates(p) {
				work = append(work, p)
			}
		}
		for len(work) > 0 {
			b := work[len(work)-1]
			work = work[:len(work)-1]
			if !l.blocks[b] {
				l.blocks[b] = true
				work = append(work, b.Preds...)
			}
		}
		iff, ok := h.Instrs[len(h.Instrs)-1].(*ssa.If)
		if !ok || !l.blocks[h.Succs[0]] || l.blocks[h.Succs[1]] {
			return nil
		}
		cond, ok := iff.Cond.(*ssa.BinOp)
		if !ok || cond.Op != token.LSS {
			return nil
		}
		ind, ok := cond.X.(*ssa.Phi)
		if !ok || ind.Block() != h || !isIntValue(ind) {
			return nil
		}
		if in, ok := cond.Y.(ssa.Instruction); ok && l.blocks[in.Block()] {
			return nil // the bound changes in the loop
		}
		for _, in := range h.Instrs[:len(h.Instrs)-1] {
			switch in.(type) {
			case *ssa.Phi, *ssa.DebugRef:
			default:
				if in != cond {
					return nil
				}
			}
		}
		for i, e := range ind.Edges {
			if !l.blocks[h.Preds[i]] {
				continue
			}
			bin, ok := e.(*ssa.BinOp)
			if !ok || bin.Op != token.ADD || bin.X != ind {
				return nil
			}
			st, ok := constInt(bin.Y)
			if !ok || st <= 0 || l.step != 0 && l.step != st {
				return nil
			}
			l.step = st
		}
		if l.step == 0 {
			return nil
		}
		l.ind, l.bound = ind, cond.Y
		return l
	}
	return nil
}

// lowerPartial lowers a partially unrolled loop; fr.blocks[header] is
// the block its entry edge jumped to, which becomes the guard.
func (kb *kernelBuilder) lowerPartial(fr *frame, l *partialLoop) {
	guard := fr.blocks[l.header.Index]
	order := loopOrder(fr.fn, &unrollLoop{header: l.header, blocks: l.blocks})
	fr.partialActive = append(fr.partialActive, l)
	defer func() { fr.partialActive = fr.partialActive[:len(fr.partialActive)-1] }()

	copies := make([]*ir.Block, l.factor)
	for j := range copies {
		copies[j] = kb.f.NewBlock(blockHint(fr.fn, l.header))
	}
	rests := make([]*ir.Block, l.factor-1)
	for j := range rests {
		rests[j] = kb.f.NewBlock(blockHint(fr.fn, l.header))
	}
	rest := rests[0]

	// The guard: i+(N−1)·s < n and i < i+(N−1)·s (no wrap-around).
	kb.b.B = guard
	t := scalarType(l.ind.Type())
	rt := t.RegType()
	i := kb.reg(kb.phiVal(fr, l.ind).ops[0], rt)
	n := kb.value(fr, l.bound).ops[0]
	last := kb.b.New(rt)
	kb.b.Arith(ir.OpAdd, rt, last, ir.R(i), ir.Imm(rt, uint64((int64(l.factor)-1)*l.step)))
	kb.normalize(t, last)
	lt := ir.LT
	if !t.IsSigned() {
		lt = ir.LO
	}
	fits, nowrap := kb.b.New(ir.Pred), kb.b.New(ir.Pred)
	kb.b.Setp(lt, rt, fits, ir.R(last), n)
	kb.b.Setp(lt, rt, nowrap, ir.R(i), ir.R(last))
	second := kb.f.NewBlock("unroll_guard")
	kb.b.BraIf(fits, true, rest)
	kb.b.Bra(second)
	kb.b.B = second
	kb.b.BraIf(nowrap, true, rest)
	kb.b.Bra(copies[0])

	lower := func(head, back *ir.Block, skip bool) {
		for _, b := range fr.fn.Blocks { // in order: labels are deterministic
			if l.blocks[b] && b != l.header {
				fr.blocks[b.Index] = kb.f.NewBlock(blockHint(fr.fn, b))
			}
		}
		fr.blocks[l.header.Index] = head
		l.skipTest, l.backTo = skip, back
		kb.lowerBlocks(fr, order)
	}
	for j, head := range copies {
		back := guard
		if j+1 < len(copies) {
			back = copies[j+1]
		}
		lower(head, back, true)
		if kb.tooLarge(l.pos) {
			return
		}
	}
	for j, head := range rests {
		back := guard
		if j+1 < len(rests) {
			back = rests[j+1]
		}
		lower(head, back, false)
	}
}

// partialAt returns the partially unrolled loop being lowered whose
// header is b.
func (fr *frame) partialAt(b *ssa.BasicBlock) *partialLoop {
	for i := len(fr.partialActive) - 1; i >= 0; i-- {
		if l := fr.partialActive[i]; l.header == b {
			return l
		}
	}
	return nil
}

// partialBackEdge returns the loop whose back edge from→to is being
// lowered, if any.
func (fr *frame) partialBackEdge(from, to *ssa.BasicBlock) *partialLoop {
	if l := fr.partialAt(to); l != nil && l.blocks[from] {
		return l
	}
	return nil
}
