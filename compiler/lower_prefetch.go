package compiler

// L2 prefetch (gpu/prefetch.go): gpu.PrefetchL2(s, i) is
//
//	setp.lo.u64 %p, i, len(s)          // unless proven (below)
//	@%p prefetch.global.L2 [&s[i]];
//
// (PTX ISA §9.7.9.15 "prefetch"; PTX 2.0, sm_20, so every target has
// it.) A prefetch is a hint and must never fault, so it is predicated on
// 0 ≤ i < len(s), one unsigned compare as a bounds check is, rather than
// bounds-checked: an index out of range prefetches nothing. The predicate
// is left out where the range analysis proves the index in range (the
// proof of a bounds check, bounds.go), and the whole call where it proves
// the index out of range; it is kept under nobounds, which drops checks
// whose failure would be the program's bug: an out-of-range prefetch is
// not one.
//
// The instruction writes no register and is not pure, so the dead-code
// pass keeps it (ir.noDefOps), and the IR passes move only pure
// instructions (remat.go), so it stays where the call is relative to
// barriers, loads and GridSync. gpu.PrefetchL2Bulk is
// lower_prefetch_bulk.go.

import (
	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

var prefetchIntrinsics = map[string]intrinsicFunc{
	"PrefetchL2":     (*kernelBuilder).prefetchL2,
	"PrefetchL2Bulk": (*kernelBuilder).prefetchL2Bulk,
}

// globalSlice reports whether the call's slice argument is in global
// memory, reporting the error at the call if not.
func (kb *kernelBuilder) globalSlice(c *icall) bool {
	if s := c.args[0]; s.space != ir.Global {
		kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.%s needs a slice in global memory (a kernel parameter or a slice of one), not %s memory", c.name, s.space)
		return false
	}
	return true
}

func (kb *kernelBuilder) prefetchL2(c *icall) *val {
	if !kb.globalSlice(c) {
		return &val{origin: -1}
	}
	s := c.args[0]
	i := kb.index64(c.arg(1), c.call.Call.Args[1].Type())
	n := s.ops[1]
	proven := false
	switch {
	case i.Kind == ir.KImm && n.Kind == ir.KImm:
		if i.Imm >= n.Imm { // unsigned: a negative index too
			return &val{origin: -1}
		}
		proven = true
	case i.Kind == ir.KImm && int64(i.Imm) < 0:
		return &val{origin: -1}
	case c.fr.ranges != nil:
		idx, x, b := c.call.Call.Args[1], c.call.Call.Args[0], c.call.Block()
		if outOfRange(c.fr.ranges, idx, x, b) {
			return &val{origin: -1}
		}
		proven = c.fr.ranges.indexInRange(idx, x, b)
	}
	addr := ir.Addr(kb.reg(kb.addOffset(s.ops[0], i, sizes.Sizeof(c.elem)), ir.U64), 0)
	if proven {
		kb.b.Prefetch(ir.Global, "L2", addr)
		return &val{origin: -1}
	}
	p := kb.b.New(ir.Pred)
	kb.b.Setp(ir.LO, ir.U64, p, i, n)
	in := kb.b.Prefetch(ir.Global, "L2", addr)
	in.Guarded, in.Guard = true, p
	return &val{origin: -1}
}

// outOfRange reports whether idx < 0 or idx ≥ len(x) wherever block b
// runs (a constant index past a fixed-length re-slice): then the call
// prefetches nothing, and emits nothing.
func outOfRange(rc *rangeCtx, idx, x ssa.Value, b *ssa.BasicBlock) bool {
	i := rc.rangeAt(idx, b)
	if !i.ok {
		return false
	}
	n := rc.lenAt(x, b, rangeDepth)
	return i.hi < 0 || n.ok && i.lo >= n.hi
}
