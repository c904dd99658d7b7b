package compiler

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// Slice expressions' bounds checks, 0 <= lo <= hi <= cap (Go spec, "Slice
// expressions"), as two unsigned compares that fail when cap < hi and
// when hi < lo. The first catches a negative hi, so the second, which
// only runs when the first held, catches a negative lo. Compared as they
// are, without the hi < cap+1 and lo < hi+1 of the index check's shape:
// each +1 is a 64-bit add (two SASS) on the path every thread runs.
//
// Their sites report what Go's run-time error says: the site's
// description is SliceSitePrefix, the position, and the form, and the
// record holds the failing bound and its limit (hi and cap, or lo and
// hi); package kern (deverror.go) turns them into "slice bounds out of
// range [:hi] with capacity cap" or "[lo:hi]".

// SliceSitePrefix starts the description of a slice expression's check
// site: "slice at file.go:12:7: [:x] with capacity y" for hi <= cap, and
// "... : [x:y]" for lo <= hi, where x is the record's index and y its
// length.
const SliceSitePrefix = "slice at "

// The forms after the position, as package kern matches them.
const (
	sliceHighForm = "[:x] with capacity y"
	sliceLowForm  = "[x:y]"
)

// checkSliceBounds emits the checks of x[lo:hi] with capacity c; hasLow
// and hasHigh say which bounds the expression wrote (an omitted lo is 0
// and an omitted hi is len, which need no check).
func (kb *kernelBuilder) checkSliceBounds(lo, hi, c ir.Operand, hasLow, hasHigh bool, pos token.Pos) {
	if hasHigh && hasLow && kb.checkBothBounds(lo, hi, c, pos) {
		return
	}
	if hasHigh {
		kb.checkNotAbove(hi, c, pos, sliceHighForm)
	}
	if hasLow {
		kb.checkNotAbove(lo, hi, pos, sliceLowForm)
	}
}

// checkNotAbove emits the check x <= limit, unsigned, reporting x and
// limit at a slice site of the given form.
func (kb *kernelBuilder) checkNotAbove(x, limit ir.Operand, pos token.Pos, form string) {
	if !kb.bounds {
		return
	}
	if x.Kind == ir.KImm && limit.Kind == ir.KImm && x.Imm <= limit.Imm {
		kb.noteCheck(pos, false)
		return
	}
	kb.noteCheck(pos, true)
	p := kb.b.New(ir.Pred)
	kb.b.Setp(ir.LO, ir.U64, p, limit, x)
	kb.failWhen(p, "oob", SliceSitePrefix+kb.posString(pos)+": "+form, x, limit)
}

// checkBothBounds emits the two checks of x[lo:hi] with one branch to one
// block, reporting whether it did (it does not when either is decided by
// constants): the block picks the first failing check's site, index and
// length with selp, hi ≤ cap's first, as Go tests it first. Two sites'
// blocks (each a code, two 64-bit moves and a branch to the handler) and
// one branch fewer, on a path no thread takes unless it faults.
func (kb *kernelBuilder) checkBothBounds(lo, hi, c ir.Operand, pos token.Pos) bool {
	if !kb.bounds || hi.Kind == ir.KImm && c.Kind == ir.KImm || lo.Kind == ir.KImm && hi.Kind == ir.KImm {
		return false
	}
	kb.noteCheck(pos, true)
	kb.noteCheck(pos, true)
	high, low, any := kb.b.New(ir.Pred), kb.b.New(ir.Pred), kb.b.New(ir.Pred)
	kb.b.Setp(ir.LO, ir.U64, high, c, hi)
	kb.b.Setp(ir.LO, ir.U64, low, hi, lo)
	kb.b.Arith(ir.OpOr, ir.Pred, any, ir.R(high), ir.R(low))
	handler := kb.failHandler() // created first, so block numbering follows the source
	where := SliceSitePrefix + kb.posString(pos) + ": "
	highSite, lowSite := kb.addSite(where+sliceHighForm), kb.addSite(where+sliceLowForm)
	blk := kb.f.NewBlock(fmt.Sprintf("oob%d", len(kb.k.Sites)))
	saved := kb.b.B
	kb.b.B = blk
	kb.b.Selp(ir.U32, kb.failRegs[0], ir.Imm(ir.U32, kb.siteCode(highSite)), ir.Imm(ir.U32, kb.siteCode(lowSite)), high)
	kb.b.Selp(ir.U64, kb.failRegs[1], hi, lo, high)
	kb.b.Selp(ir.U64, kb.failRegs[2], c, hi, high)
	kb.b.Bra(handler)
	kb.b.B = saved
	kb.b.BraIf(any, false, blk)
	return true
}

// lowBoundChecked reports whether an earlier slice expression of in's
// block has the same lo and hi (sameIntExpr), whose lo ≤ hi check then
// passed before in runs: x[r*n:(r+1)*n] and out[r*n:(r+1)*n] test it once
// (go/ssa computes each bound again per expression).
func lowBoundChecked(in *ssa.Slice) bool {
	if in.Low == nil || in.High == nil {
		return false
	}
	for _, i := range in.Block().Instrs {
		if i == in {
			return false
		}
		if s, ok := i.(*ssa.Slice); ok && s.Low != nil && s.High != nil && s.Max == nil &&
			sameIntExpr(s.Low, in.Low, 4) && sameIntExpr(s.High, in.High, 4) {
			return true
		}
	}
	return false
}

// sameIntExpr reports whether a and b compute the same integer from the
// same SSA values by +, −, ·, &, |, ^ and conversions (which cannot fault
// and have no effect), to depth d.
func sameIntExpr(a, b ssa.Value, d int) bool {
	if a == b {
		return true
	}
	if d == 0 || !types.Identical(a.Type(), b.Type()) {
		return false
	}
	switch a := a.(type) {
	case *ssa.Const:
		bc, ok := b.(*ssa.Const)
		return ok && a.Value != nil && bc.Value != nil && constant.Compare(a.Value, token.EQL, bc.Value)
	case *ssa.BinOp:
		bb, ok := b.(*ssa.BinOp)
		switch a.Op {
		case token.ADD, token.SUB, token.MUL, token.AND, token.OR, token.XOR:
		default:
			return false
		}
		return ok && a.Op == bb.Op && sameIntExpr(a.X, bb.X, d-1) && sameIntExpr(a.Y, bb.Y, d-1)
	case *ssa.Convert:
		bc, ok := b.(*ssa.Convert)
		return ok && sameIntExpr(a.X, bc.X, d-1)
	}
	return false
}
