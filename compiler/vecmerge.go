package compiler

// Adjacent loads and stores merged into one ld.v2/ld.v4 (st.v2/st.v4).
//
// `a, b := x[i], x[i+1]` or `y[i], y[i+1], y[i+2], y[i+3] = …` in one
// block, where the address of x[i] is provably a multiple of the group's
// width (align.go), becomes one vector access (PTX ISA §9.7.9.8: the
// access must be naturally aligned to the vector size): 2 or 4 elements
// of 16, 32 or 64 bits, 32 to 128 bits in all. gpu.PackHalf2 pairs are
// pack2.go's.
//
// It is decided on SSA, not on the IR: every access keeps its bounds check
// (at its IndexAddr, as before), and a check ends an IR block, so in the
// IR the accesses of a group lie in different blocks with their index
// expressions lowered to registers. In SSA the group is still one block
// of IndexAddrs at b+c, b+c+1, … of one slice, which findVecGroups
// matches; lowering then emits the vector access at the group's last
// member, after all its checks:
//
//   - loads: every member's value is used only after the last member (or
//     in later blocks), and nothing between the first and the last writes
//     memory (only address arithmetic and other loads), so loading all at
//     the last one reads what each load would have read;
//   - stores: nothing between the first and the last reads or writes
//     memory, so storing all at the last one leaves memory as the stores
//     in order would. A failing check between them stops the thread
//     before either form stores anything past it; the stores before it
//     in the group are the difference: Go would have done them. So a
//     store group is merged only when every member's check is proven or
//     off, and a load group whatever its checks (loads have no effect).
//
// Whether the slice is aligned is known when its first member lowers
// (val.align), so the group is decided then and lowers element by element
// when it is not.

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// vecGroup is 2 or 4 adjacent loads or stores of one slice.
type vecGroup struct {
	ias    []*ssa.IndexAddr
	loads  []*ssa.UnOp  // a load group's dereferences
	stores []*ssa.Store // a store group's stores
	// Decided when the first member lowers.
	active bool
	regs   []ir.Reg // a load group's destinations
	et     ir.Type
}

// findVecGroups finds the groups of fn, keyed by each load or store in
// them; pairs are pack2.go's, left alone.
func findVecGroups(fn *ssa.Function, ac *alignCtx, pairs map[ssa.Instruction]*pack2Pair) map[ssa.Instruction]*vecGroup {
	var out map[ssa.Instruction]*vecGroup
	for _, b := range fn.Blocks {
		for i := 0; i < len(b.Instrs); i++ {
			for _, n := range []int{4, 2} {
				g := matchVecGroup(b, i, n, ac, pairs, out)
				if g == nil {
					continue
				}
				if out == nil {
					out = map[ssa.Instruction]*vecGroup{}
				}
				for k := range g.ias {
					if g.loads != nil {
						out[g.loads[k]] = g
					} else {
						out[g.stores[k]] = g
					}
				}
				break
			}
		}
	}
	return out
}

// vecMember returns the IndexAddr a load or store of one slice element
// goes through, and whether it is a store.
func vecMember(in ssa.Instruction) (*ssa.IndexAddr, bool, bool) {
	switch in := in.(type) {
	case *ssa.UnOp:
		if in.Op != token.MUL {
			return nil, false, false
		}
		ia, ok := in.X.(*ssa.IndexAddr)
		if !ok || !onlyUse(ia, in) {
			return nil, false, false
		}
		return ia, false, true
	case *ssa.Store:
		ia, ok := in.Addr.(*ssa.IndexAddr)
		if !ok || !onlyUse(ia, in) {
			return nil, false, false
		}
		return ia, true, true
	}
	return nil, false, false
}

func matchVecGroup(b *ssa.BasicBlock, first, n int, ac *alignCtx, pairs map[ssa.Instruction]*pack2Pair, taken map[ssa.Instruction]*vecGroup) *vecGroup {
	in0 := b.Instrs[first]
	ia0, store, ok := vecMember(in0)
	if !ok || pairs[in0] != nil || taken[in0] != nil {
		return nil
	}
	if _, ok := ia0.X.Type().Underlying().(*types.Slice); !ok {
		return nil
	}
	et := scalarType(ia0.Type().Underlying().(*types.Pointer).Elem())
	size := et.Bytes()
	if et == ir.Invalid || et == ir.Pred || size < 2 || size*n > 16 || size*n < 4 {
		return nil
	}
	if ac.tzAt(ia0.Index, b)+log2Size(int64(size)) < log2Size(int64(size*n)) {
		return nil
	}
	base, c0 := splitConstOffset(ia0.Index)
	g := &vecGroup{ias: []*ssa.IndexAddr{ia0}, et: et}
	members := []ssa.Instruction{in0}
	last := first
	for j := first + 1; j < len(b.Instrs) && len(g.ias) < n; j++ {
		in := b.Instrs[j]
		if ia, st, ok := vecMember(in); ok && st == store && ia.X == ia0.X && pairs[in] == nil {
			bj, cj := splitConstOffset(ia.Index)
			if sameExpr(bj, base, 4) && cj == c0+int64(len(g.ias)) && types.Identical(ia.Index.Type(), ia0.Index.Type()) {
				g.ias = append(g.ias, ia)
				members = append(members, in)
				last = j
				continue
			}
		}
		switch in := in.(type) {
		case *ssa.IndexAddr, *ssa.BinOp, *ssa.Convert, *ssa.ChangeType, *ssa.DebugRef:
		case *ssa.UnOp:
			if store && in.Op == token.MUL {
				return nil // a read between deferred stores
			}
		default:
			return nil
		}
	}
	if len(g.ias) < n {
		return nil
	}
	if store {
		for _, m := range members {
			g.stores = append(g.stores, m.(*ssa.Store))
		}
		return g
	}
	for _, m := range members {
		u := m.(*ssa.UnOp)
		for _, r := range *u.Referrers() {
			if r.Block() == b && instrIndex(b.Instrs, r) <= last {
				return nil // used before the vector load would be done
			}
		}
		g.loads = append(g.loads, u)
	}
	return g
}

// groupActive decides, at g's first member, whether it lowers as one
// vector access: the slice's base must be aligned too, and a store group's
// checks all proven or off.
func (kb *kernelBuilder) groupActive(fr *frame, g *vecGroup) bool {
	x := kb.value(fr, g.ias[0].X)
	need := log2Size(int64(g.et.Bytes() * len(g.ias)))
	g.active = x.cells == nil && x.space != ir.Local && max(x.align, log2Size(int64(g.et.Bytes()))) >= need
	if g.active && g.stores != nil && kb.bounds {
		for _, ia := range g.ias {
			if !fr.safe[ia] {
				g.active = false
			}
		}
	}
	return g.active
}

// groupLoad lowers a load of a group, reporting whether it did.
func (kb *kernelBuilder) groupLoad(fr *frame, in *ssa.UnOp) (*val, bool) {
	g := fr.groups[in]
	if g == nil || g.loads == nil {
		return nil, false
	}
	k := 0
	for k < len(g.loads) && g.loads[k] != in {
		k++
	}
	if k == 0 {
		if !kb.groupActive(fr, g) {
			return nil, false
		}
		g.regs = make([]ir.Reg, len(g.loads))
		for i := range g.regs {
			g.regs[i] = kb.b.New(g.et)
		}
	} else if !g.active {
		return nil, false
	}
	if k == len(g.loads)-1 {
		p := kb.value(fr, g.ias[0])
		kb.b.Ld(p.space, false, g.et, ir.Vec(g.regs...), ir.Addr(kb.reg(p.ops[0], ir.U64), 0))
		kb.noteGlobalLoad(p)
	}
	return scalar(g.regs[k]), true
}

// groupStore lowers a store of a group, reporting whether it did.
func (kb *kernelBuilder) groupStore(fr *frame, s *ssa.Store) bool {
	g := fr.groups[s]
	if g == nil || g.stores == nil {
		return false
	}
	k := 0
	for k < len(g.stores) && g.stores[k] != s {
		k++
	}
	if k == 0 && !kb.groupActive(fr, g) || !g.active {
		return false
	}
	if k < len(g.stores)-1 {
		return true // stored with the last
	}
	p := kb.value(fr, g.ias[0])
	src := make([]ir.Reg, len(g.stores))
	for i, st := range g.stores {
		src[i] = kb.reg(kb.value(fr, st.Val).ops[0], g.et)
	}
	kb.noteWrite(p)
	kb.b.St(p.space, g.et, ir.Addr(kb.reg(p.ops[0], ir.U64), 0), ir.Vec(src...))
	return true
}
