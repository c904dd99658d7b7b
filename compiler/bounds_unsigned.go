package compiler

// The unsigned guard idiom of bounds-check elimination: after
//
//	if uint(i) < uint(len(x)) { ... x[i] ... }
//
// i is in [0, len(x)), as Go's own prove pass knows: a negative int
// converts to a uint of at least 2⁶³, above every length. One compare
// both masks an access and proves it, where `i >= 0 && i < len(x)` takes
// two (gpu/tile's copies of a view's elements: a chunk or element i of
// the view is copied under this guard, which is also its row mask).

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// guardedUnsigned reports whether a branch dominating b established
// uint(idx) < uint(n), n equal to len(x), with both conversions
// from a 64-bit signed integer to a 64-bit unsigned one.
func guardedUnsigned(idx, x ssa.Value, b *ssa.BasicBlock) bool {
	for d, succ := range dominatingEdges(b) {
		cmp, ok := d.Instrs[len(d.Instrs)-1].(*ssa.If).Cond.(*ssa.BinOp)
		if !ok {
			continue
		}
		op := cmp.Op
		if succ == 1 {
			op = negate(op)
		}
		var i, n ssa.Value
		switch op {
		case token.LSS:
			i, n = cmp.X, cmp.Y
		case token.GTR:
			i, n = cmp.Y, cmp.X
		default:
			continue
		}
		i, n = signedSource(i), signedSource(n)
		if i != nil && n != nil && sameValue(i, idx) && isLenOf(n, x) {
			return true
		}
	}
	return false
}

// signedSource returns x of a conversion uint64(x) with x a 64-bit signed
// integer (int, int64), or nil.
func signedSource(v ssa.Value) ssa.Value {
	c, ok := v.(*ssa.Convert)
	if !ok {
		return nil
	}
	to, ok1 := c.Type().Underlying().(*types.Basic)
	from, ok2 := c.X.Type().Underlying().(*types.Basic)
	if !ok1 || !ok2 || to.Info()&types.IsUnsigned == 0 || from.Info()&types.IsInteger == 0 || from.Info()&types.IsUnsigned != 0 {
		return nil
	}
	if scalarType(to).Bits() != 64 || scalarType(from).Bits() != 64 {
		return nil
	}
	return c.X
}
