package compiler

// Hoisted bounds checks: the third outcome of a check, after proven
// (bounds.go) and kept. In a counted loop
//
//	for iv := iv0; iv < N; iv += s { ... x[iv+b+c] ... }
//
// with x, b, N and s loop-invariant and s ≥ 0, the index of each access
// grows with the iteration, so whether it is in range is decided before
// the loop: iteration iv is safe for x[iv+b+c] iff iv < len(x)-b-c, once
// the first iteration is. Instead of a test per access and iteration, the
// entry edge computes
//
//	limit = min(N, for each access: (iv0+b+c in [0, len(x)) ? len(x)-b-c : iv0))
//
// and the loop runs while iv < limit. Leaving with iv < N means that the
// next iteration would fault: the exit edge then runs the hoisted checks
// once, in program order, at that iv (the cold block), and the first that
// fails reports its own site, index and length, exactly as the per-
// iteration check would have. Accesses of the same slice whose indices
// differ by a constant share one bound (c spans [cmin, cmax]).
//
// That is only exact when nothing observable happens in the faulting
// iteration before the access: an access is hoisted only from the block
// the loop's test enters, and only when every instruction before it there
// is free of effects and cannot fault (arithmetic, loads through proven or
// hoisted indices, local arrays, pure intrinsics). The first instruction
// that is not ends the accesses hoisted in that loop.
//
// No wrap-around: the range analysis bounds iv0 and s by maxLen, and an
// access is only trusted from a first index in [0, len(x)), so limit,
// every index the loop computes and iv itself stay below 2⁵⁰.

import (
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// hoistLoop is the plan for one loop header.
type hoistLoop struct {
	header *ssa.BasicBlock
	entry  *ssa.BasicBlock // the one predecessor outside the loop
	iv     *ssa.Phi
	entryI int // index of entry in header.Preds
	bound  ssa.Value
	step   ssa.Value // s
	inLoop map[*ssa.BasicBlock]bool
	groups []*hoistGroup
	access []hoistAccess // in program order
	limit  ir.Reg        // allocated on first emission
	// pure: the loop has no effect a fault could cut short (hoist_pure.go),
	// so the entry edge decides the fault and the loop tests iv < N.
	pure bool
	cold *ir.Block // the hoisted_fault block, once allocated
}

// hoistGroup is the accesses x[iv+b+c] of one slice and one symbolic b.
type hoistGroup struct {
	x          ssa.Value
	terms      []linTerm
	cmin, cmax int64
	// nonNeg: the range analysis shows every index of the group ≥ 0 and
	// below 2⁵⁰, so only the upper end needs testing.
	nonNeg bool
	// proven: a launch fact proves every access of the group
	// (launchfact.go), so it needs no limit, only its pointer.
	proven bool
	// size is the element size; ptr, once allocated, holds &x[iv+b]
	// (hoist_sr.go).
	size int64
	ptr  ir.Reg
}

type hoistAccess struct {
	ia *ssa.IndexAddr
	g  *hoistGroup
	c  int64
}

// linTerm is an invariant addend of an index, negated when neg; key
// spells it so that two computations of the same expression (go/ssa
// computes 8*k once per use) compare equal.
type linTerm struct {
	v   ssa.Value
	key string
	neg bool
}

// hoistLimit bounds the first index and step a plan accepts, and the
// constants c: far from the 2⁶³ at which int64 arithmetic wraps.
const hoistLimit = maxLen

// planHoists finds the loops of fr whose checks can be hoisted, marking
// each hoisted access in fr.hoisted.
func (kb *kernelBuilder) planHoists(fr *frame) map[*ssa.BasicBlock]*hoistLoop {
	if !kb.bounds || fr.ranges == nil {
		return nil
	}
	plans := map[*ssa.BasicBlock]*hoistLoop{}
	for _, h := range fr.fn.Blocks {
		if pl := kb.planLoop(fr, h); pl != nil {
			plans[h] = pl
			for _, a := range pl.access {
				fr.hoisted[a.ia] = pl
			}
		}
	}
	return plans
}

// planLoop checks that h heads a counted loop of the form above and
// collects the accesses its body block may hoist.
func (kb *kernelBuilder) planLoop(fr *frame, h *ssa.BasicBlock) *hoistLoop {
	if len(h.Preds) != 2 || len(h.Instrs) < 2 || fr.unrolled[h] != nil {
		return nil
	}
	for _, l := range fr.unrolled {
		if l.blocks[h] {
			return nil // lowered once per unrolled iteration
		}
	}
	ifi, ok := h.Instrs[len(h.Instrs)-1].(*ssa.If)
	if !ok {
		return nil
	}
	cmp, ok := ifi.Cond.(*ssa.BinOp)
	if !ok || cmp.Op != token.LSS {
		return nil
	}
	iv, ok := cmp.X.(*ssa.Phi)
	if !ok || iv.Block() != h || !isInt64(iv.Type()) {
		return nil
	}
	pl := &hoistLoop{header: h, iv: iv, bound: cmp.Y, limit: -1}
	// The header computes nothing but the test (and the invariant
	// bound), so iteration iv's effects begin in the body.
	for _, in := range h.Instrs[:len(h.Instrs)-1] {
		switch in := in.(type) {
		case *ssa.Phi, *ssa.DebugRef:
		case *ssa.BinOp:
			if in != cmp && !harmlessBinOp(in) {
				return nil
			}
		case *ssa.Call:
			if !isLenCall(in) {
				return nil
			}
		default:
			return nil
		}
	}
	latch := -1
	for i, p := range h.Preds {
		if h.Dominates(p) {
			latch = i
		} else {
			pl.entry, pl.entryI = p, i
		}
	}
	if latch < 0 || pl.entry == nil {
		return nil
	}
	pl.inLoop = loopBlocks(h, h.Preds[latch])
	body, exit := h.Succs[0], h.Succs[1]
	if !pl.inLoop[body] || pl.inLoop[exit] || len(body.Preds) != 1 || !pl.invariant(cmp.Y, 0) || !pl.outside(cmp.Y) && cmp.Y.(ssa.Instruction).Block() != h {
		return nil
	}
	// The step: iv' = iv + s with 0 ≤ s ≤ hoistLimit (s need not be
	// invariant: t.BlockDim().X is computed in the loop), and a first
	// value within ±hoistLimit.
	step, ok := iv.Edges[latch].(*ssa.BinOp)
	if !ok || step.Op != token.ADD {
		return nil
	}
	s := step.Y
	if step.Y == iv {
		s = step.X
	} else if step.X != iv {
		return nil
	}
	pl.step = s
	if r := fr.ranges.rangeAt(s, h); !r.ok || r.lo < 0 || r.hi > hoistLimit {
		return nil
	}
	if r := fr.ranges.rangeAt(iv.Edges[pl.entryI], pl.entry); !r.ok || r.lo < -hoistLimit || r.hi > hoistLimit {
		return nil
	}
	pl.scan(fr, body)
	if len(pl.access) == 0 {
		return nil
	}
	pl.pure = pl.pureLoop(fr, body)
	for _, g := range pl.groups {
		g.nonNeg = true
	}
	for _, a := range pl.access {
		if r := fr.ranges.rangeAt(a.ia.Index, body); !r.ok || r.lo < 0 || r.hi > 4*maxLen {
			a.g.nonNeg = false
		}
	}
	return pl
}

// scan collects the hoistable accesses of body, up to its first
// instruction that could fault or be observed.
func (pl *hoistLoop) scan(fr *frame, body *ssa.BasicBlock) {
	for _, instr := range body.Instrs {
		switch in := instr.(type) {
		case *ssa.IndexAddr:
			if fr.safe[in] {
				if fr.factSafe[in] {
					// It cannot fault, so it never ends the scan; if
					// linear, its pointer walks with the loop.
					pl.addAccess(in, true)
				}
				continue
			}
			if !pl.addAccess(in, false) {
				return
			}
		case *ssa.DebugRef, *ssa.Convert, *ssa.ChangeType, *ssa.Field, *ssa.Extract, *ssa.Alloc, *ssa.FieldAddr:
		case *ssa.UnOp:
			if in.Op == token.ARROW {
				return
			}
		case *ssa.BinOp:
			if !harmlessBinOp(in) {
				return
			}
		case *ssa.Store:
			if !localAddr(in.Addr) {
				return
			}
		case *ssa.Call:
			if !pureCall(in) {
				return
			}
		default:
			return
		}
	}
}

// harmlessBinOp reports whether b cannot fault: integer division and
// shifts by a variable amount carry checks of their own.
func harmlessBinOp(b *ssa.BinOp) bool {
	if t := scalarType(b.Type()); t.IsFloat() || t == ir.Pred {
		return true
	}
	switch b.Op {
	case token.QUO, token.REM:
		return false
	case token.SHL, token.SHR:
		_, ok := b.Y.(*ssa.Const)
		return ok
	}
	return true
}

// localAddr reports whether a store to addr writes a local variable,
// which nothing observes once the thread has faulted.
func localAddr(addr ssa.Value) bool {
	for {
		switch a := addr.(type) {
		case *ssa.Alloc:
			return !a.Heap
		case *ssa.IndexAddr:
			if _, ok := a.X.Type().Underlying().(*types.Pointer); !ok {
				return false
			}
			addr = a.X
		case *ssa.FieldAddr:
			addr = a.X
		default:
			return false
		}
	}
}

// pureCalls are the gpu intrinsics with no effect and no check of their
// own that a hoisting scan may step over.
var pureCalls = map[string]bool{
	"PackHalf2": true, "PackBFloat162": true, "Half.Float32": true, "BFloat16.Float32": true,
	"ToHalf": true, "ToBFloat16": true, "FMA": true, "Abs": true, "Min": true, "Max": true,
	"Exp": true, "Exp2": true, "Sqrt": true, "Rsqrt": true,
}

func pureCall(c *ssa.Call) bool {
	if bi, ok := c.Call.Value.(*ssa.Builtin); ok {
		return bi.Name() == "min" || bi.Name() == "max"
	}
	fn := c.Call.StaticCallee()
	if fn == nil {
		return false
	}
	name, ok := gpuIntrinsicName(fn)
	return ok && pureCalls[name]
}

// access returns the plan's record of ia.
// allProven reports whether launch facts prove every hoisted access: the
// loop then needs no limit and no cold block, only its pointers.
func (pl *hoistLoop) allProven() bool {
	for _, g := range pl.groups {
		if !g.proven {
			return false
		}
	}
	return true
}

func (pl *hoistLoop) accessOf(ia *ssa.IndexAddr) hoistAccess {
	for _, a := range pl.access {
		if a.ia == ia {
			return a
		}
	}
	return hoistAccess{}
}

// addAccess adds ia when its slice is invariant and its index is iv plus
// invariant terms plus a constant; proven says a launch fact proves it.
func (pl *hoistLoop) addAccess(ia *ssa.IndexAddr, proven bool) bool {
	if _, ok := ia.X.Type().Underlying().(*types.Slice); !ok || !pl.outside(ia.X) || !isInt64(ia.Index.Type()) {
		return false
	}
	coef, terms, c, ok := pl.linear(ia.Index, 0)
	if !ok || coef != 1 || c < -hoistLimit || c > hoistLimit {
		return false
	}
	for i := range terms {
		terms[i].key = pl.termKey(terms[i].v)
	}
	slices.SortFunc(terms, func(a, b linTerm) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		if a.neg == b.neg {
			return 0
		}
		if a.neg {
			return 1
		}
		return -1
	})
	same := func(a, b linTerm) bool { return a.key == b.key && a.neg == b.neg }
	for _, g := range pl.groups {
		if g.x == ia.X && slices.EqualFunc(g.terms, terms, same) {
			g.cmin, g.cmax = min(g.cmin, c), max(g.cmax, c)
			g.proven = g.proven && proven
			pl.access = append(pl.access, hoistAccess{ia, g, c})
			return true
		}
	}
	g := &hoistGroup{x: ia.X, terms: terms, cmin: c, cmax: c, ptr: -1, proven: proven,
		size: sizes.Sizeof(ia.X.Type().Underlying().(*types.Slice).Elem())}
	pl.groups = append(pl.groups, g)
	pl.access = append(pl.access, hoistAccess{ia, g, c})
	return true
}

// termKey spells an invariant term: values from outside the loop by
// name, the arithmetic the loop computes on them by structure. The keys
// also order a group's terms, so the output is deterministic.
func (pl *hoistLoop) termKey(v ssa.Value) string {
	if k, ok := constInt(v); ok {
		return strconv.FormatInt(k, 10)
	}
	if b, ok := v.(*ssa.BinOp); ok && !pl.outside(v) {
		return "(" + pl.termKey(b.X) + b.Op.String() + pl.termKey(b.Y) + ")"
	}
	if c, ok := v.(*ssa.Call); ok && !pl.outside(v) {
		return "len(" + pl.termKey(c.Call.Args[0]) + ")"
	}
	return v.Name() // unique in the function: tN, or a parameter's name
}

// linear writes v as coef·iv + Σ terms + c.
func (pl *hoistLoop) linear(v ssa.Value, depth int) (coef int64, terms []linTerm, c int64, ok bool) {
	if depth > 8 {
		return 0, nil, 0, false
	}
	if v == pl.iv {
		return 1, nil, 0, true
	}
	if k, ok := constInt(v); ok {
		return 0, nil, k, true
	}
	if b, isBin := v.(*ssa.BinOp); isBin && (b.Op == token.ADD || b.Op == token.SUB) {
		c1, t1, k1, ok1 := pl.linear(b.X, depth+1)
		c2, t2, k2, ok2 := pl.linear(b.Y, depth+1)
		if !ok1 || !ok2 || k1 < -hoistLimit || k1 > hoistLimit || k2 < -hoistLimit || k2 > hoistLimit {
			return 0, nil, 0, false
		}
		if b.Op == token.SUB {
			c2, k2 = -c2, -k2
			for i := range t2 {
				t2[i].neg = !t2[i].neg
			}
		}
		return c1 + c2, append(t1, t2...), k1 + k2, true
	}
	if pl.invariant(v, 0) {
		return 0, []linTerm{{v: v}}, 0, true
	}
	return 0, nil, 0, false
}

// outside reports whether v is available before the loop: a constant or
// a value defined outside it (which then dominates the entry edge).
func (pl *hoistLoop) outside(v ssa.Value) bool {
	switch v := v.(type) {
	case *ssa.Const:
		return true
	case ssa.Instruction:
		return !pl.inLoop[v.Block()]
	}
	return true // parameters, globals, functions
}

// invariant reports whether v is an int64 computed from values available
// before the loop by +, - and * and len alone (so emitInvariant can
// recompute it on the entry edge).
func (pl *hoistLoop) invariant(v ssa.Value, depth int) bool {
	if !isInt64(v.Type()) || depth > 8 {
		return false
	}
	if pl.outside(v) {
		return true
	}
	if c, ok := v.(*ssa.Call); ok {
		return isLenCall(c) && pl.outside(c.Call.Args[0])
	}
	b, ok := v.(*ssa.BinOp)
	if !ok || (b.Op != token.ADD && b.Op != token.SUB && b.Op != token.MUL) {
		return false
	}
	return pl.invariant(b.X, depth+1) && pl.invariant(b.Y, depth+1)
}

// isLenCall reports whether c is len of a slice.
func isLenCall(c *ssa.Call) bool {
	bi, ok := c.Call.Value.(*ssa.Builtin)
	if !ok || bi.Name() != "len" || len(c.Call.Args) != 1 {
		return false
	}
	_, ok = c.Call.Args[0].Type().Underlying().(*types.Slice)
	return ok
}

func isInt64(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && (b.Kind() == types.Int || b.Kind() == types.Int64)
}

// loopBlocks returns the blocks of the loop with header h and back edge
// from latch: those reaching latch without passing h.
func loopBlocks(h, latch *ssa.BasicBlock) map[*ssa.BasicBlock]bool {
	in := map[*ssa.BasicBlock]bool{h: true}
	work := []*ssa.BasicBlock{latch}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if in[b] {
			continue
		}
		in[b] = true
		work = append(work, b.Preds...)
	}
	return in
}
