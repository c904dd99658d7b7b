package compiler

// Bounds-check elimination. Kernels are bounds-checked on the device by
// default; the check of x[i] is left out when the range analysis
// (ranges.go) proves 0 ≤ i < len(x) wherever the access runs:
//
//   - the interval of i, narrowed by the branches and checked operations
//     that dominate the access, lies below the smallest len(x) can be (a
//     gpu.Shared array's constant length, an array type's, a re-slice
//     x[a:a+n] whose n is bounded), or
//   - i ≥ 0 and a dominating branch established i < n where n is len(x)
//     or a value equal to it (the n of x[a:a+n] or x[r*n:(r+1)*n]): the
//     idioms `if i < len(out)`, `if i >= n { return }`, `for i := range x`
//     and `for j := tid; j < cols; j += step` over a row of cols elements.
//
// A check that stays costs a compare and a predicated branch that is never
// taken. Each site's outcome is recorded (Kernel.Checks) for kern check -v.

import (
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// provablySafe returns the index operations of fn (one activation, whose
// arguments are args) that need no check, and the range analysis that
// proved them (nil with Config.KeepChecks).
func (kb *kernelBuilder) provablySafe(fn *ssa.Function, args []*val, promoted map[*ssa.Alloc]bool) (map[*ssa.IndexAddr]bool, *rangeCtx) {
	rc := newRangeCtx(fn, kb.k.Block, kb.idx32)
	if kb.bounds {
		rc.promoted = promoted
	}
	params := map[*ssa.Parameter]*val{}
	for i, p := range fn.Params {
		if i < len(args) && args[i] != nil {
			params[p] = args[i]
		}
	}
	rc.arg = func(p *ssa.Parameter) interval {
		a := params[p]
		if a == nil || len(a.ops) != 1 {
			return unknown
		}
		return kb.opInterval(a.ops[0], scalarType(p.Type()))
	}
	rc.argSlot = func(p *ssa.Parameter, off int) interval {
		a := params[p]
		fl, ok := flatten(p.Type())
		if a == nil || !ok || len(a.ops) != len(fl) || off < 0 || off >= len(fl) {
			return unknown
		}
		return kb.opInterval(a.ops[off], fl[off])
	}
	rc.argLen = func(p *ssa.Parameter) interval {
		a := params[p]
		if _, ok := p.Type().Underlying().(*types.Slice); !ok || a == nil || len(a.ops) != 3 {
			return unknown
		}
		return kb.opInterval(a.ops[1], ir.S64)
	}
	safe := map[*ssa.IndexAddr]bool{}
	if kb.cfg.KeepChecks {
		return safe, nil
	}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if ia, ok := instr.(*ssa.IndexAddr); ok && rc.inRange(ia) {
				safe[ia] = true
			}
		}
	}
	return safe, rc
}

// inRange reports whether 0 ≤ ia.Index < len(ia.X) wherever ia runs.
func (rc *rangeCtx) inRange(ia *ssa.IndexAddr) bool {
	return rc.indexInRange(ia.Index, ia.X, ia.Block())
}

// indexInRange reports whether 0 ≤ idx < len(x) wherever block b runs:
// the proof of inRange, also for an index that is not an IndexAddr's
// (gpu.PrefetchL2's, lower_prefetch.go).
func (rc *rangeCtx) indexInRange(idx, x ssa.Value, b *ssa.BasicBlock) bool {
	if guardedUnsigned(idx, x, b) {
		return true
	}
	i := rc.rangeAt(idx, b)
	if !i.ok || i.lo < 0 {
		return false
	}
	if n := rc.lenAt(x, b, rangeDepth); n.ok && i.hi < n.lo {
		return true
	}
	return guarded(idx, x, b)
}

// guarded reports whether a branch dominating b established
// idx < len(x).
func guarded(idx, x ssa.Value, b *ssa.BasicBlock) bool {
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
		if sameValue(i, idx) && isLenOf(n, x) {
			return true
		}
	}
	return false
}

func sameValue(a, b ssa.Value) bool {
	if a == b {
		return true
	}
	ca, ok1 := constInt(a)
	cb, ok2 := constInt(b)
	return ok1 && ok2 && ca == cb
}

// isLenOf reports whether n equals len(x): the call len(x), or the length
// operand of the re-slice x is.
func isLenOf(n, x ssa.Value) bool {
	if s, ok := x.(*ssa.Slice); ok && symLen(s) == n {
		return true
	}
	call, ok := n.(*ssa.Call)
	if !ok {
		return false
	}
	bi, ok := call.Call.Value.(*ssa.Builtin)
	return ok && bi.Name() == "len" && len(call.Call.Args) == 1 && call.Call.Args[0] == x
}

// noteHoisted records one copy of the check at pos as hoisted out of its
// loop (hoist.go).
func (kb *kernelBuilder) noteHoisted(pos token.Pos) {
	kb.noteCheck(pos, false)
	kb.hoistedAt[pos] = true
}

// noteCheck records one copy of the check at pos: kept, or not needed.
func (kb *kernelBuilder) noteCheck(pos token.Pos, kept bool) {
	kb.checks[pos] = kb.checks[pos] || kept
}

func (kb *kernelBuilder) checkReport() CheckReport {
	var r CheckReport
	pos := make([]token.Pos, 0, len(kb.checks))
	for p := range kb.checks {
		pos = append(pos, p)
	}
	slices.Sort(pos)
	for _, p := range pos {
		if !kb.checks[p] {
			if kb.hoistedAt[p] {
				r.Hoisted++
				r.HoistedAt = append(r.HoistedAt, kb.fset.Position(p).String())
			} else {
				r.Proven++
			}
			continue
		}
		r.Kept++
		r.KeptAt = append(r.KeptAt, kb.fset.Position(p).String())
	}
	return r
}
