package compiler

import (
	"go/token"

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
