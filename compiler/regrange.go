package compiler

// Intervals of registers, so that an inlined helper's range analysis
// (ranges.go) sees what its caller knew of the arguments.
//
// The range analysis runs per activation over go/ssa, before the
// activation is lowered, and a helper's parameters are otherwise bounded
// only by constant arguments: gpu/tile's FlashAttention passes a slot
// number (1+j&1) and a struct of lane offsets (tile.Attn, built by
// NewAttn from the lane and warp index) to QK, PV and Stage, whose
// shared-memory indexes were therefore unprovable and kept their checks
// (half of the KV loop's SASS). Arguments arrive as registers, so the
// caller records, as it lowers, the interval of each register it defines
// (kernelBuilder.regRange), and a callee asks for the registers of its
// arguments, a struct argument's fields included (rangeCtx.argSlot).
//
// A register's interval must hold for every value the register is ever
// given, so only registers written in one place, or in places all
// accounted for, are recorded:
//
//   - the one register an integer SSA value (not a φ) is lowered to,
//     when that register was created while lowering it: the value's
//     interval in its own block (every use is dominated by that block);
//   - an inlined helper's result registers, written only by its
//     returns: the join over the returns of the returned operands'
//     intervals (lowerReturn);
//   - a promoted local's cells (struct or array locals kept in
//     registers): 0, their value before any store, joined with every
//     store into them in the function, found before lowering (so a
//     read in a loop before a later store is covered), as
//     structFieldSpaces does for pointers; a cell written any other way
//     (through an element of an array, a wgmma accumulator) is unknown;
//     a load from cells copies them into fresh registers, which take
//     the cells' intervals.
//
// Only kernels with bounds checks record (kb.bounds): a nobounds kernel
// compiles as before.

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// opInterval bounds an operand holding a value of scalar type t: an
// immediate exactly, a register by what was recorded for it.
func (kb *kernelBuilder) opInterval(o ir.Operand, t ir.Type) interval {
	switch o.Kind {
	case ir.KImm:
		if typeRange(t) == unknown {
			if int64(o.Imm) < 0 {
				return unknown
			}
			return exactly(int64(o.Imm))
		}
		return exactly(int64(signExtend(o.Imm, t)))
	case ir.KReg:
		return kb.idx32Reg(o).meet(kb.regRange[o.Reg])
	}
	return unknown
}

// setRegRange records that register r holds values in iv (met with what
// was recorded already: both hold).
func (kb *kernelBuilder) setRegRange(r ir.Reg, iv interval) {
	if !iv.ok || !kb.bounds {
		return
	}
	kb.regRange[r] = kb.regRange[r].meet(iv)
}

// noteValueRange records the interval of the register instr's value was
// lowered to, when that register is new (numbered from before) and the
// value is an integer other than a φ (whose register the predecessors'
// moves also write).
func (kb *kernelBuilder) noteValueRange(fr *frame, instr ssa.Instruction, before int) {
	if !kb.bounds || fr.ranges == nil {
		return
	}
	v, ok := instr.(ssa.Value)
	if !ok {
		return
	}
	if _, phi := v.(*ssa.Phi); phi {
		return
	}
	lv := fr.vals[v]
	if s, ok := v.(*ssa.Slice); ok && lv != nil && len(lv.ops) == 3 && lv.ops[1].Kind == ir.KReg && int(lv.ops[1].Reg) >= before {
		// A re-slice's new length register (lowerSlice's hi - lo).
		kb.setRegRange(lv.ops[1].Reg, fr.ranges.lenAt(s, instr.Block(), rangeDepth))
		return
	}
	if t := scalarType(v.Type()); t == ir.Invalid || t == ir.Pred || t.IsFloat() {
		return
	}
	if lv == nil || len(lv.ops) != 1 || lv.cells != nil || lv.ops[0].Kind != ir.KReg || int(lv.ops[0].Reg) < before {
		return
	}
	kb.setRegRange(lv.ops[0].Reg, fr.ranges.rangeAt(v, instr.Block()))
}

// joinReturn joins the operands one return moves into an inlined
// helper's results into fr.retRng.
func (kb *kernelBuilder) joinReturn(fr *frame, i int, o ir.Operand) {
	if !kb.bounds {
		return
	}
	if fr.retRng == nil {
		fr.retRng = make([]interval, len(fr.result))
		fr.retSeen = make([]bool, len(fr.result))
	}
	iv := kb.opInterval(o, fr.resT[i])
	if !fr.retSeen[i] {
		fr.retRng[i], fr.retSeen[i] = iv, true
		return
	}
	fr.retRng[i] = fr.retRng[i].join(iv)
}

// noteResultRanges records an inlined helper's result registers once its
// body, so every return, is lowered.
func (kb *kernelBuilder) noteResultRanges(sub *frame) {
	for i, r := range sub.result {
		if i < len(sub.retRng) && sub.retSeen[i] {
			kb.setRegRange(r, sub.retRng[i])
		}
	}
}

// cellStore is a store into cells [lo, hi) of a promoted local (st nil:
// a write the analysis does not follow, which makes them unknown).
type cellStore struct {
	st     *ssa.Store
	lo, hi int
}

// cellStores lists the writes into the cells of the promoted local a.
// Below an element of an array (an IndexAddr, whose index the lowering
// makes constant per unrolled copy) the element is not known, so a store
// there covers the whole array's cells and makes them unknown.
func cellStores(a *ssa.Alloc) []cellStore {
	var out []cellStore
	var visit func(addr ssa.Value, lo, hi, depth int, exact bool)
	visit = func(addr ssa.Value, lo, hi, depth int, exact bool) {
		refs := addr.Referrers()
		if refs == nil {
			return
		}
		if depth > 16 {
			out = append(out, cellStore{nil, lo, hi})
			return
		}
		for _, r := range *refs {
			switch r := r.(type) {
			case *ssa.DebugRef:
			case *ssa.UnOp:
				if r.Op != token.MUL {
					out = append(out, cellStore{nil, lo, hi})
				}
			case *ssa.FieldAddr:
				st, ok := r.X.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Struct)
				switch {
				case !ok:
					out = append(out, cellStore{nil, lo, hi})
				case exact:
					off := lo + flatOffset(st, r.Field)
					visit(r, off, off+flatLen(st.Field(r.Field).Type()), depth+1, true)
				default:
					visit(r, lo, hi, depth+1, false)
				}
			case *ssa.IndexAddr:
				visit(r, lo, hi, depth+1, false)
			case *ssa.Store:
				if r.Addr != addr || !exact {
					out = append(out, cellStore{nil, lo, hi})
					continue
				}
				out = append(out, cellStore{r, lo, hi})
			default: // a wgmma's in-place accumulator, say
				out = append(out, cellStore{nil, lo, hi})
			}
		}
	}
	visit(a, 0, flatLen(a.Type().Underlying().(*types.Pointer).Elem()), 0, true)
	return out
}

type cellKey struct {
	a   *ssa.Alloc
	off int
}

// cell bounds flattened cell off of the promoted local a: 0 (its value
// before any store) joined with what every store into it writes (see the
// file comment); unknown when a is not promoted or the kernel has no
// checks. A cell whose stores read it back (a.x = a.x + 1) sees unknown
// for itself while it is being solved, so it is unknown.
func (rc *rangeCtx) cell(a *ssa.Alloc, off int) interval {
	if !rc.promoted[a] {
		return unknown
	}
	k := cellKey{a, off}
	if r, ok := rc.cells[k]; ok {
		return r
	}
	rc.cells[k] = unknown // in progress
	stores, ok := rc.stores[a]
	if !ok {
		stores = cellStores(a)
		rc.stores[a] = stores
	}
	r := exactly(0)
	for _, cs := range stores {
		if off < cs.lo || off >= cs.hi {
			continue
		}
		if cs.st == nil {
			r = unknown
			break
		}
		if r = r.join(rc.storeSlot(cs.st, off-cs.lo, cs.hi-cs.lo)); !r.ok {
			break
		}
	}
	rc.cells[k] = r
	return r
}

// storeSlot bounds flattened slot i of what st writes (n slots).
func (rc *rangeCtx) storeSlot(st *ssa.Store, i, n int) interval {
	if t := scalarType(st.Val.Type()); n == 1 && t != ir.Invalid && t != ir.Pred && !t.IsFloat() {
		return rc.rangeAt(st.Val, st.Block())
	}
	if flatLen(st.Val.Type()) != n {
		return unknown
	}
	switch v := st.Val.(type) {
	case *ssa.Const:
		if v.Value == nil { // the zero value of a struct or array
			return exactly(0)
		}
	case *ssa.Parameter:
		return rc.argSlot(v, i)
	case *ssa.UnOp:
		// A copy of another promoted local (a := T{…} copies its
		// composite literal's local).
		if a, off, ok := promotedField(v.X, rc.promoted); ok && v.Op == token.MUL {
			return rc.cell(a, off+i)
		}
	}
	return unknown
}

// cellLoad bounds *addr, a load of one scalar cell of a promoted local.
func (rc *rangeCtx) cellLoad(addr ssa.Value) interval {
	a, off, ok := promotedField(addr, rc.promoted)
	if !ok {
		return unknown
	}
	return rc.cell(a, off)
}
