package compiler

// Loop unrolling for //kern:unroll.
//
// The loop is not copied in SSA. Lowering simply lowers the loop's blocks
// once per iteration with the induction variable bound to that
// iteration's constant: comparisons and arithmetic on constants fold
// (fold.go), so the loop test becomes an unconditional jump, indices into
// local arrays become constants (keeping those arrays in registers), and
// the back edge jumps to the next iteration's copy of the header. Other
// header phis stay registers, assigned on each back edge as usual.

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// maxUnroll bounds the iterations one unrolled loop may take.
const maxUnroll = 1024

// unrollLoop is a loop marked //kern:unroll, found in SSA.
type unrollLoop struct {
	header *ssa.BasicBlock
	blocks map[*ssa.BasicBlock]bool
	ind    *ssa.Phi // the induction variable: a header phi
	init   *ssa.Const
	stmt   ast.Stmt
	// During lowering: the next iteration's header block (created when a
	// back edge is lowered) and the induction value it carries.
	next    *ir.Block
	nextInd *val
}

// findUnrolled locates the SSA loops of fn marked //kern:unroll.
func (c *pkgCtx) findUnrolled(fn *ssa.Function) map[*ssa.BasicBlock]*unrollLoop {
	if len(c.unroll) == 0 || fn.Syntax() == nil {
		return nil
	}
	syn := fn.Syntax()
	out := map[*ssa.BasicBlock]*unrollLoop{}
	ast.Inspect(syn, func(n ast.Node) bool {
		s, ok := n.(ast.Stmt)
		if !ok || !c.unroll[s.Pos()] {
			return true
		}
		if l := c.loopOf(fn, s); l != nil {
			out[l.header] = l
		} else {
			c.d.errorf(s.Pos(), BadUnroll, "//kern:unroll: cannot unroll this loop: its counter must start at a constant and step by a constant")
		}
		return true
	})
	return out
}

// loopOf finds the natural loop of stmt: for a three-clause loop, the
// block testing its condition; for range over an int, the largest
// rangeint loop whose instructions all lie inside the statement.
func (c *pkgCtx) loopOf(fn *ssa.Function, s ast.Stmt) *unrollLoop {
	var best *unrollLoop
	for _, b := range fn.Blocks {
		switch st := s.(type) {
		case *ast.ForStmt:
			be, ok := st.Cond.(*ast.BinaryExpr)
			if !ok || b.Comment != "for.loop" || !blockHasPos(b, be.OpPos) {
				continue
			}
		case *ast.RangeStmt:
			if b.Comment != "rangeint.body" {
				continue
			}
		default:
			continue
		}
		l := naturalLoop(b)
		if l == nil || !loopWithin(l, s) {
			continue
		}
		// A rangeint loop's own blocks carry no positions, so an outer
		// one passes loopWithin for an inner statement too: the loop must
		// also hold as many rangeint loops as the statement nests.
		if rs, ok := s.(*ast.RangeStmt); ok && innerRangeInts(l) != c.nestedRangeInts(rs) {
			continue
		}
		if best == nil || len(l.blocks) > len(best.blocks) {
			best = l
		}
	}
	if best != nil {
		best.stmt = s
	}
	return best
}

// innerRangeInts counts the rangeint loop headers inside l, other than
// its own.
func innerRangeInts(l *unrollLoop) int {
	n := 0
	for b := range l.blocks {
		if b != l.header && b.Comment == "rangeint.body" {
			n++
		}
	}
	return n
}

// typeOf is the underlying type of e, an expression of the kernel
// package or of a library package compiled with it (a nested loop in
// gpu/tile is counted with gpu/tile's types), or nil.
func (c *pkgCtx) typeOf(e ast.Expr) types.Type {
	for _, info := range append([]*types.Info{c.info}, c.libInfo...) {
		if t := info.TypeOf(e); t != nil {
			return t.Underlying()
		}
	}
	return nil
}

// nestedRangeInts counts the range-over-int statements inside s's body.
func (c *pkgCtx) nestedRangeInts(s *ast.RangeStmt) int {
	n := 0
	ast.Inspect(s.Body, func(x ast.Node) bool {
		if r, ok := x.(*ast.RangeStmt); ok && r.X != nil {
			if t, ok := c.typeOf(r.X).(*types.Basic); ok && t.Info()&types.IsInteger != 0 {
				n++
			}
		}
		return true
	})
	return n
}

func blockHasPos(b *ssa.BasicBlock, p token.Pos) bool {
	for _, in := range b.Instrs {
		if in.Pos() == p {
			return true
		}
	}
	return false
}

func loopWithin(l *unrollLoop, s ast.Stmt) bool {
	for b := range l.blocks {
		for _, in := range b.Instrs {
			if _, phi := in.(*ssa.Phi); phi {
				continue // a phi's position is its variable's declaration
			}
			if p := in.Pos(); p.IsValid() && (p < s.Pos() || p >= s.End()) {
				return false
			}
		}
	}
	return true
}

// steps are the operators an unrolled counter may step by (with a
// constant): lowering folds each iteration's value.
var steps = map[token.Token]bool{token.ADD: true, token.SUB: true, token.MUL: true, token.QUO: true, token.SHL: true, token.SHR: true}

// naturalLoop returns the loop headed by h with a constant-initialised
// induction phi, or nil.
func naturalLoop(h *ssa.BasicBlock) *unrollLoop {
	l := &unrollLoop{header: h, blocks: map[*ssa.BasicBlock]bool{h: true}}
	var work []*ssa.BasicBlock
	for _, p := range h.Preds {
		if h.Dominates(p) {
			work = append(work, p)
		}
	}
	if len(work) == 0 {
		return nil
	}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if l.blocks[b] {
			continue
		}
		l.blocks[b] = true
		work = append(work, b.Preds...)
	}
	for _, in := range h.Instrs {
		phi, ok := in.(*ssa.Phi)
		if !ok {
			break
		}
		var init *ssa.Const
		good := true
		for i, e := range phi.Edges {
			if l.blocks[h.Preds[i]] {
				bin, ok := e.(*ssa.BinOp)
				if !ok || !steps[bin.Op] || bin.X != phi {
					good = false
				} else if _, c := bin.Y.(*ssa.Const); !c {
					good = false
				}
			} else if c, ok := e.(*ssa.Const); ok && init == nil {
				init = c
			} else {
				good = false
			}
		}
		if good && init != nil {
			l.ind, l.init = phi, init
			return l
		}
	}
	return nil
}

// lowerUnrolled lowers an unrolled loop: its blocks once per iteration.
func (kb *kernelBuilder) lowerUnrolled(fr *frame, l *unrollLoop) {
	ind := kb.constVal(l.init)
	order := loopOrder(fr.fn, l)
	fr.active = append(fr.active, l)
	defer func() { fr.active = fr.active[:len(fr.active)-1] }()
	for iter := 0; ; iter++ {
		if iter > maxUnroll {
			kb.d.errorf(l.stmt.Pos(), BadUnroll, "//kern:unroll: the loop runs more than %d iterations", maxUnroll)
			return
		}
		if kb.tooLarge(l.stmt.Pos()) {
			return
		}
		fr.vals[l.ind] = ind
		l.next, l.nextInd = nil, nil
		for b := range l.blocks {
			delete(fr.reached, b)
		}
		fr.reach(l.header)
		kb.lowerBlocks(fr, order)
		if l.next == nil {
			return
		}
		if l.nextInd == nil || l.nextInd.ops[0].Kind != ir.KImm {
			kb.d.errorf(l.stmt.Pos(), BadUnroll, "//kern:unroll: the loop counter is not a constant in every iteration")
			return
		}
		ind = l.nextInd
		// Fresh blocks for the next iteration; the header's is the one the
		// back edge already targets.
		for _, b := range fr.fn.Blocks { // in order: labels are deterministic
			if !l.blocks[b] {
				continue
			}
			if b == l.header {
				fr.blocks[b.Index] = l.next
			} else {
				fr.blocks[b.Index] = kb.f.NewBlock(blockHint(fr.fn, b))
			}
		}
	}
}

// loopOrder is the loop's blocks in reverse postorder: every block after
// its forward predecessors, so whether a branch of this iteration reaches
// it is known when its turn comes.
func loopOrder(fn *ssa.Function, l *unrollLoop) []*ssa.BasicBlock {
	var post []*ssa.BasicBlock
	seen := map[*ssa.BasicBlock]bool{}
	var visit func(b *ssa.BasicBlock)
	visit = func(b *ssa.BasicBlock) {
		seen[b] = true
		for _, s := range b.Succs {
			if !seen[s] && l.blocks[s] {
				visit(s)
			}
		}
		post = append(post, b)
	}
	visit(l.header)
	out := make([]*ssa.BasicBlock, len(post))
	for i, b := range post {
		out[len(post)-1-i] = b
	}
	return out
}

// reach records a branch to b in the current iteration.
func (fr *frame) reach(b *ssa.BasicBlock) {
	if len(fr.active) == 0 {
		return
	}
	if fr.reached == nil {
		fr.reached = map[*ssa.BasicBlock]bool{}
	}
	fr.reached[b] = true
}

// deadInIteration reports whether b belongs to an unrolled loop being
// lowered and no branch of the current iteration reaches it.
func (fr *frame) deadInIteration(b *ssa.BasicBlock) bool {
	for _, l := range fr.active {
		if l.blocks[b] {
			return !fr.reached[b]
		}
	}
	return false
}

// backEdge reports whether from→to is a back edge of an active unrolled
// loop, returning it.
func (fr *frame) backEdge(from, to *ssa.BasicBlock) *unrollLoop {
	for i := len(fr.active) - 1; i >= 0; i-- {
		l := fr.active[i]
		if to == l.header && l.blocks[from] {
			return l
		}
	}
	return nil
}

// unrollConst reports whether v is a constant once unrolled loops are
// unrolled: a constant, an induction variable of an unrolled loop, or
// arithmetic on those.
func (fr *frame) unrollConst(v ssa.Value) bool {
	switch v := v.(type) {
	case *ssa.Const:
		return true
	case *ssa.Phi:
		for _, l := range fr.unrolled {
			if l.ind == v {
				return true
			}
		}
	case *ssa.BinOp:
		return fr.unrollConst(v.X) && fr.unrollConst(v.Y)
	case *ssa.Convert:
		return fr.unrollConst(v.X)
	}
	return false
}
