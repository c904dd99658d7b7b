package compiler

// Bounds-check elimination. Kernels are bounds-checked on the device by
// default; a check is left out when the index is provably in range:
//
//   - a constant index into an array (the type checker proved it), or
//   - x[i] inside the true branch of a dominating `i < len(x)` (or
//     `len(x) > i`), or the false branch of `i >= len(x)` (or
//     `len(x) <= i`), on the same slice, with i provably non-negative.
//
// This covers the idioms `if i < len(out) { out[i] = ... }`,
// `if i >= len(out) { return }` and `for i := range x { x[i] ... }`; anything else keeps its check, which
// costs a compare and a predicated branch that is never taken.

import (
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

func provablySafe(fn *ssa.Function) map[*ssa.IndexAddr]bool {
	safe := map[*ssa.IndexAddr]bool{}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			ia, ok := instr.(*ssa.IndexAddr)
			if !ok {
				continue
			}
			if _, isConst := ia.Index.(*ssa.Const); isConst {
				if _, isPtr := ia.X.Type().Underlying().(*types.Pointer); isPtr {
					safe[ia] = true // array element: the type checker bounds constant indices
				}
			}
			if !safe[ia] && guarded(ia) && nonNegative(ia.Index, map[ssa.Value]bool{}) {
				safe[ia] = true
			}
		}
	}
	return safe
}

// guarded reports whether a dominating branch established
// ia.Index < len(ia.X).
func guarded(ia *ssa.IndexAddr) bool {
	blk := ia.Block()
	for d := blk.Idom(); d != nil; d = d.Idom() {
		iff, ok := d.Instrs[len(d.Instrs)-1].(*ssa.If)
		if !ok {
			continue
		}
		cmp, ok := iff.Cond.(*ssa.BinOp)
		if !ok {
			continue
		}
		// succ is the successor on which idx < n holds: the true one of
		// i < len(x), the false one of i >= len(x) (the early-return idiom).
		var idx, n ssa.Value
		succ := 0
		switch cmp.Op {
		case token.LSS:
			idx, n = cmp.X, cmp.Y
		case token.GTR:
			idx, n = cmp.Y, cmp.X
		case token.GEQ:
			idx, n, succ = cmp.X, cmp.Y, 1
		case token.LEQ:
			idx, n, succ = cmp.Y, cmp.X, 1
		default:
			continue
		}
		if !sameValue(idx, ia.Index) || !isLenOf(n, ia.X) {
			continue
		}
		// That successor must dominate the access, and be entered only
		// from the branch.
		t := d.Succs[succ]
		if len(t.Preds) == 1 && t.Dominates(blk) {
			return true
		}
	}
	return false
}

func sameValue(a, b ssa.Value) bool {
	if a == b {
		return true
	}
	ca, ok1 := a.(*ssa.Const)
	cb, ok2 := b.(*ssa.Const)
	return ok1 && ok2 && ca.Value != nil && cb.Value != nil && constant.Compare(ca.Value, token.EQL, cb.Value)
}

// isLenOf reports whether n is len(x).
func isLenOf(n, x ssa.Value) bool {
	call, ok := n.(*ssa.Call)
	if !ok {
		return false
	}
	bi, ok := call.Call.Value.(*ssa.Builtin)
	return ok && bi.Name() == "len" && len(call.Call.Args) == 1 && call.Call.Args[0] == x
}

// nonNegative reports whether an integer value is provably ≥ 0.
func nonNegative(v ssa.Value, visiting map[ssa.Value]bool) bool {
	if visiting[v] {
		return true // assumed for loop-carried values; checked on the other edges
	}
	visiting[v] = true
	defer delete(visiting, v)
	switch v := v.(type) {
	case *ssa.Const:
		return v.Value != nil && constant.Sign(v.Value) >= 0
	case *ssa.Call:
		if bi, ok := v.Call.Value.(*ssa.Builtin); ok {
			return bi.Name() == "len" || bi.Name() == "cap"
		}
		if fn := v.Call.StaticCallee(); fn != nil {
			if name, ok := gpuIntrinsicName(fn); ok {
				switch name {
				case "Thread.GlobalX", "Thread.GlobalY", "Thread.GlobalZ", "Thread.LinearIdx", "Thread.Lane", "Thread.Warp":
					return true
				}
			}
		}
	case *ssa.Field:
		// ThreadIdx().X etc. are non-negative.
		if call, ok := v.X.(*ssa.Call); ok {
			if fn := call.Call.StaticCallee(); fn != nil {
				if _, ok := gpuIntrinsicName(fn); ok {
					return true
				}
			}
		}
	case *ssa.BinOp:
		switch v.Op {
		case token.ADD:
			// The range-loop idiom: phi(-1, i+1) + 1.
			if c, ok := v.Y.(*ssa.Const); ok && c.Value != nil {
				if p, ok := v.X.(*ssa.Phi); ok && constant.Sign(c.Value) > 0 {
					return phiAtLeastMinusOne(p, v)
				}
			}
			return nonNegative(v.X, visiting) && nonNegative(v.Y, visiting)
		case token.MUL, token.QUO, token.REM:
			return nonNegative(v.X, visiting) && nonNegative(v.Y, visiting)
		case token.SHR:
			return nonNegative(v.X, visiting)
		case token.AND:
			return nonNegative(v.X, visiting) || nonNegative(v.Y, visiting)
		}
	case *ssa.Phi:
		for _, e := range v.Edges {
			if !nonNegative(e, visiting) {
				return false
			}
		}
		return true
	case *ssa.Convert:
		return unsignedNarrower(v) || nonNegative(v.X, visiting)
	}
	return false
}

// phiAtLeastMinusOne recognises p = phi(c ≥ -1, ..., inc) where inc = p+k.
func phiAtLeastMinusOne(p *ssa.Phi, inc *ssa.BinOp) bool {
	for _, e := range p.Edges {
		if e == inc {
			continue
		}
		c, ok := e.(*ssa.Const)
		if !ok || c.Value == nil || constant.Compare(c.Value, token.LSS, constant.MakeInt64(-1)) {
			return false
		}
	}
	return true
}

// unsignedNarrower reports whether v converts an unsigned integer to a
// wider signed integer (always non-negative).
func unsignedNarrower(v *ssa.Convert) bool {
	from, to := scalarType(v.X.Type()), scalarType(v.Type())
	return from.IsSigned() == false && !from.IsFloat() && from.Bits() > 1 && to.IsSigned() && to.Bits() > from.Bits()
}
