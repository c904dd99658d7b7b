package compiler

// gpu.PackHalf2(s[i], s[i+1]) (and PackBFloat162) as one 32-bit load.
//
// A tensor-core fragment register holds two adjacent halves, and a kernel
// that loads fragments from memory writes PackHalf2(a[i], a[i+1]). Lowered
// as written that is two 16-bit loads, a mov.b32 {lo, hi} and two bounds
// checks; when the address of s[i] is provably 4-byte aligned it is one
// ld.b32 (little-endian: s[i] lands in bits 0..15, as PackHalf2 puts lo)
// and one check:
//
//   - alignment: the slice's base is aligned to 4 bytes or more (val.align:
//     a buffer parameter, or a re-slice of one at an even offset) and i is
//     even (align.go);
//   - bounds: with i even, i+1 < len(s) as unsigned implies 0 ≤ i too (i
//     cannot be −1), so the check of s[i+1] covers both. Its failure path
//     reports what Go would: s[i] when i is out of range, else s[i+1].
//
// The pattern is matched on SSA before lowering (findPack2Pairs): both
// loads are dereferences of IndexAddrs of the same slice, at indices b+c
// and b+c+1, whose only use is the call, with nothing but pure arithmetic,
// address computation and loads between them (no store can intervene).
// Lowering then skips the first load, emits the word at the second, and
// the call returns it. Whether the slice is aligned is known only when it
// is lowered (its val carries the alignment), so a pair is decided when its
// first IndexAddr lowers, and lowers as two loads when it is not aligned.

import (
	"go/constant"
	"go/token"
	"go/types"
	"strconv"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// pack2Pair is one PackHalf2(s[i], s[i+1]) candidate.
type pack2Pair struct {
	lo, hi         *ssa.IndexAddr
	loLoad, hiLoad *ssa.UnOp
	call           *ssa.Call
	// Decided when lo lowers (each time: an unrolled loop lowers it once
	// per iteration).
	active   bool
	combined bool // one check, at hi, covers lo too
	loIdx    ir.Operand
	word     ir.Reg
}

// findPack2Pairs finds the candidates in fn, keyed by each instruction
// whose lowering they change.
func findPack2Pairs(fn *ssa.Function, ac *alignCtx) map[ssa.Instruction]*pack2Pair {
	var out map[ssa.Instruction]*pack2Pair
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			call, ok := instr.(*ssa.Call)
			if !ok || len(call.Call.Args) != 2 {
				continue
			}
			callee := call.Call.StaticCallee()
			if callee == nil {
				continue
			}
			if name, ok := gpuIntrinsicName(callee); !ok || name != "PackHalf2" && name != "PackBFloat162" {
				continue
			}
			p := matchPack2(call, ac)
			if p == nil {
				continue
			}
			if out == nil {
				out = map[ssa.Instruction]*pack2Pair{}
			}
			for _, k := range []ssa.Instruction{p.lo, p.hi, p.loLoad, p.hiLoad, p.call} {
				out[k] = p
			}
		}
	}
	return out
}

func matchPack2(call *ssa.Call, ac *alignCtx) *pack2Pair {
	lo, loLoad := derefOfIndex(call.Call.Args[0], call)
	hi, hiLoad := derefOfIndex(call.Call.Args[1], call)
	if lo == nil || hi == nil || lo.X != hi.X || lo.Block() != call.Block() || hi.Block() != call.Block() {
		return nil
	}
	lb, lc := splitConstOffset(lo.Index)
	hb, hc := splitConstOffset(hi.Index)
	if !sameExpr(lb, hb, 4) || hc != lc+1 || !types.Identical(lo.Index.Type(), hi.Index.Type()) {
		return nil
	}
	if ac.tzAt(lo.Index, lo.Block()) < 1 {
		return nil
	}
	// Only pure instructions between the two loads: the word is read at
	// the second, so no store may come between.
	in := call.Block().Instrs
	i0, i1 := instrIndex(in, loLoad), instrIndex(in, hiLoad)
	if i0 < 0 || i1 < 0 || i1 < i0 || instrIndex(in, lo) > i0 || instrIndex(in, hi) > i1 {
		return nil
	}
	for _, x := range in[i0+1 : i1] {
		switch x := x.(type) {
		case *ssa.IndexAddr, *ssa.BinOp, *ssa.Convert, *ssa.DebugRef, *ssa.ChangeType:
		case *ssa.UnOp:
			if x.Op != token.MUL && x.Op != token.SUB && x.Op != token.XOR {
				return nil
			}
		default:
			return nil
		}
	}
	return &pack2Pair{lo: lo, hi: hi, loLoad: loLoad, hiLoad: hiLoad, call: call}
}

// derefOfIndex matches v = *&s[i] of a slice s, used only by call.
func derefOfIndex(v ssa.Value, call *ssa.Call) (*ssa.IndexAddr, *ssa.UnOp) {
	u, ok := v.(*ssa.UnOp)
	if !ok || u.Op != token.MUL || !onlyUse(u, call) {
		return nil, nil
	}
	ia, ok := u.X.(*ssa.IndexAddr)
	if !ok || !onlyUse(ia, u) {
		return nil, nil
	}
	if _, ok := ia.X.Type().Underlying().(*types.Slice); !ok {
		return nil, nil
	}
	return ia, u
}

func onlyUse(v ssa.Value, user ssa.Instruction) bool {
	refs := v.Referrers()
	if refs == nil {
		return false
	}
	n := 0
	for _, r := range *refs {
		if _, dbg := r.(*ssa.DebugRef); dbg {
			continue
		}
		if r != user {
			return false
		}
		n++
	}
	return n >= 1
}

// splitConstOffset writes v as base + c (base nil for a constant).
func splitConstOffset(v ssa.Value) (ssa.Value, int64) {
	if c, ok := constInt(v); ok {
		return nil, c
	}
	if b, ok := v.(*ssa.BinOp); ok && b.Op == token.ADD {
		if c, ok := constInt(b.Y); ok {
			return b.X, c
		}
		if c, ok := constInt(b.X); ok {
			return b.Y, c
		}
	}
	return v, 0
}

// sameExpr reports whether a and b compute the same value: the same
// SSA value, equal constants, or the same pure operation on operands that
// are (go/ssa does not share a+8*k between a+8*k+8 and a+8*k+9).
func sameExpr(a, b ssa.Value, depth int) bool {
	if a == b {
		return true
	}
	if depth == 0 {
		return false
	}
	switch a := a.(type) {
	case *ssa.Const:
		c, ok := b.(*ssa.Const)
		return ok && types.Identical(a.Type(), c.Type()) && a.Value != nil && c.Value != nil && constant.Compare(a.Value, token.EQL, c.Value)
	case *ssa.BinOp:
		c, ok := b.(*ssa.BinOp)
		return ok && a.Op == c.Op && types.Identical(a.Type(), c.Type()) && sameExpr(a.X, c.X, depth-1) && sameExpr(a.Y, c.Y, depth-1)
	case *ssa.Convert:
		c, ok := b.(*ssa.Convert)
		return ok && types.Identical(a.Type(), c.Type()) && sameExpr(a.X, c.X, depth-1)
	}
	return false
}

func instrIndex(in []ssa.Instruction, x ssa.Instruction) int {
	for i, y := range in {
		if y == x {
			return i
		}
	}
	return -1
}

// pairIndex lowers the check of a paired IndexAddr, reporting whether it
// did (false: the caller checks as usual). x is the slice, i its index
// as s64, n its length.
func (kb *kernelBuilder) pairIndex(fr *frame, in *ssa.IndexAddr, x *val, i, n ir.Operand) bool {
	p := fr.pairs[in]
	if p == nil {
		return false
	}
	if in == p.lo {
		p.active = x.cells == nil && x.space != ir.Local && max(x.align, 1) >= 2
		// A hoisted access is checked before its loop (hoist.go), like a
		// proven one: only a pair neither of whose checks is done
		// elsewhere shares one check.
		p.combined = p.active && kb.bounds && !fr.safe[p.lo] && !fr.safe[p.hi] && fr.hoisted[p.lo] == nil && fr.hoisted[p.hi] == nil
		p.loIdx = i
		if p.combined {
			kb.noteCheck(in.Pos(), true)
			return true
		}
		return false
	}
	if !p.combined {
		return false
	}
	kb.noteCheck(in.Pos(), true)
	bad := kb.b.New(ir.Pred)
	kb.b.Setp(ir.HS, ir.U64, bad, i, n)
	kb.failHandler()
	blk := kb.f.NewBlock("oob" + strconv.Itoa(len(kb.k.Sites)))
	saved := kb.b.B
	kb.b.B = blk
	// Go checks s[i] first: report it when i is out of range.
	loSite := kb.addSite(kb.posString(p.lo.Pos()), kb.posString(in.Pos()))
	loOK := kb.b.New(ir.Pred)
	kb.b.Setp(ir.LO, ir.U64, loOK, p.loIdx, n)
	code, idx := kb.b.New(ir.U32), kb.b.New(ir.U64)
	kb.b.Selp(ir.U32, code, ir.Imm(ir.U32, kb.siteCode(loSite+1)), ir.Imm(ir.U32, kb.siteCode(loSite)), loOK)
	kb.b.Selp(ir.U64, idx, i, p.loIdx, loOK)
	kb.b.Mov(ir.U32, kb.failRegs[0], ir.R(code))
	kb.b.Mov(ir.U64, kb.failRegs[1], ir.R(idx))
	kb.b.Mov(ir.U64, kb.failRegs[2], n)
	kb.b.Bra(kb.failHandler())
	kb.b.B = saved
	kb.b.BraIf(bad, false, blk)
	return true
}

// pairLoad lowers a paired dereference, reporting whether it did.
func (kb *kernelBuilder) pairLoad(fr *frame, in *ssa.UnOp) (*val, bool) {
	p := fr.pairs[in]
	if p == nil || !p.active {
		return nil, false
	}
	if in == p.loLoad {
		return &val{ops: []ir.Operand{ir.Imm(ir.U16, 0)}, origin: -1}, true
	}
	addr := kb.value(fr, p.lo)
	p.word = kb.b.New(ir.U32)
	kb.b.Ld(addr.space, false, ir.U32, ir.R(p.word), ir.Addr(kb.reg(addr.ops[0], ir.U64), 0))
	kb.noteGlobalLoad(addr)
	return &val{ops: []ir.Operand{ir.Imm(ir.U16, 0)}, origin: -1}, true
}

// pairWord is the loaded word of a paired PackHalf2 call, if it was.
func (kb *kernelBuilder) pairWord(fr *frame, call *ssa.Call) (*val, bool) {
	p := fr.pairs[call]
	if p == nil || !p.active {
		return nil, false
	}
	return scalar(p.word), true
}
