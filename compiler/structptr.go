package compiler

// Pointers and slices held in structs kept in registers: which space and
// which parameters they address.
//
// A struct local kept in registers (a promoted Alloc, lowered to cells)
// stores a pointer or slice field in its generic form, because a cell may
// be read by code that knows nothing of where it points. Without more,
// every use of the field (p.s[i] = …) is then a generic access that may
// touch any parameter, so the kernel is marked as writing all of them (no
// ld.global.nc, and the launch refuses inputs that share a buffer): what
// gpu/tile's partitions, which are such structs, did.
//
// So each value that holds a struct carries, per flattened slot, what the
// pointer in it may address (val.slots), and a field read from it gets
// that back, the generic pointer converted to its space again:
//
//   - a promoted local's slot: the join over every store into that field
//     of the local in the function (structFieldSpaces, before lowering, so
//     a read before a later store, in a loop, is covered); a slot written
//     any other way (the whole struct at once) is unknown;
//   - an inlined helper's struct result: the join over its returns, each
//     of which must carry slots;
//   - a struct argument: its val, slots and all.
//
// Anything else (phis of structs, memory) has no slots: generic, as before.

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// joinPtr is the ptrInfo of a value that may be either a or b.
func joinPtr(a, b ptrInfo) ptrInfo {
	if !a.set {
		return b
	}
	if !b.set {
		return a
	}
	out := ptrInfo{space: a.space, origin: a.origin, mask: a.mask, set: true}
	if a.space != b.space {
		out.space = ir.Generic
	}
	if a.origin == b.origin && a.mask == b.mask {
		return out
	}
	ma, anyA := originSet(a.space, a.origin, a.mask)
	mb, anyB := originSet(b.space, b.origin, b.mask)
	switch {
	case anyA || anyB:
		out.origin, out.mask = -1, 0
		if out.space == ir.Shared || out.space == ir.Local {
			out.space = ir.Generic
		}
	case ma|mb == 0:
		out.origin, out.mask = -1, 0
	default:
		out.origin, out.mask = manyOrigins, ma|mb
	}
	return out
}

// unknownPtr marks a slot whose pointer may address anything.
var unknownPtr = ptrInfo{ir.Generic, -1, 0, true}

// structFieldSpaces returns, for each promoted struct local of fn, what
// the pointer in each of its flattened slots may address, from the stores
// into it (spaces is fn's pointerSpaces, args its arguments): a pointer
// stored into a field, or a whole struct copied from another such local
// or from an argument that carries slots. Anything else stored makes the
// slots it covers unknown. The joins run to a fixed point, as locals copy
// into one another.
func structFieldSpaces(fn *ssa.Function, promoted map[*ssa.Alloc]bool, spaces map[ssa.Value]ptrInfo, args []*val) map[*ssa.Alloc][]ptrInfo {
	out := map[*ssa.Alloc][]ptrInfo{}
	slotsOf := func(a *ssa.Alloc) []ptrInfo {
		if s, ok := out[a]; ok {
			return s
		}
		s := make([]ptrInfo, flatLen(a.Type().Underlying().(*types.Pointer).Elem()))
		out[a] = s
		return s
	}
	params := map[ssa.Value][]ptrInfo{}
	for i, p := range fn.Params {
		if i < len(args) && args[i] != nil && args[i].slots != nil {
			params[p] = args[i].slots
		}
	}
	// source returns the slots a struct value v of n slots copies, or
	// nil when they are unknown.
	source := func(v ssa.Value, n int) []ptrInfo {
		if s, ok := params[v]; ok && len(s) == n {
			return s
		}
		if u, ok := v.(*ssa.UnOp); ok && u.Op == token.MUL {
			if a, off, ok := promotedField(u.X, promoted); ok {
				if s := out[a]; s != nil && off+n <= len(s) {
					return s[off : off+n]
				}
			}
		}
		return nil
	}
	var stores []*ssa.Store
	opaque := map[*ssa.Alloc]bool{} // written through a path promotedField does not follow
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			st, ok := instr.(*ssa.Store)
			if !ok {
				continue
			}
			a, _, ok := promotedField(st.Addr, promoted)
			if !ok {
				if r := rootAlloc(st.Addr); r != nil && promoted[r] {
					opaque[r] = true // an element of an array field: unknown
				}
				continue
			}
			if _, isStruct := a.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Struct); isStruct {
				slotsOf(a)
				stores = append(stores, st)
			}
		}
	}
	for a := range opaque {
		s := slotsOf(a)
		for i := range s {
			s[i] = unknownPtr
		}
	}
	for changed := true; changed; {
		changed = false
		set := func(s []ptrInfo, i int, pi ptrInfo) {
			if j := joinPtr(s[i], pi); j != s[i] {
				s[i], changed = j, true
			}
		}
		for _, st := range stores {
			a, off, _ := promotedField(st.Addr, promoted)
			s := out[a]
			n := flatLen(st.Val.Type())
			if isPointerLike(st.Val.Type()) {
				pi, ok := spaces[st.Val]
				if !ok || !pi.set {
					pi = unknownPtr
				}
				set(s, off, pi)
				continue
			}
			src := source(st.Val, n)
			for i := 0; i < n; i++ {
				switch {
				case src == nil:
					set(s, off+i, unknownPtr)
				case src[i].set:
					set(s, off+i, src[i])
				}
			}
		}
	}
	return out
}

// promotedField resolves addr, a chain of field addresses rooted at a
// promoted local, to the local and the flattened offset it addresses.
func promotedField(addr ssa.Value, promoted map[*ssa.Alloc]bool) (*ssa.Alloc, int, bool) {
	switch a := addr.(type) {
	case *ssa.Alloc:
		return a, 0, promoted[a]
	case *ssa.FieldAddr:
		root, off, ok := promotedField(a.X, promoted)
		if !ok {
			return nil, 0, false
		}
		st := a.X.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Struct)
		return root, off + flatOffset(st, a.Field), true
	}
	return nil, 0, false
}

// knownSpace reports whether pi names a space a generic pointer can be
// converted back to.
func knownSpace(pi ptrInfo) bool {
	return pi.set && (pi.space == ir.Global || pi.space == ir.Shared)
}

// fromSlots returns the val of a pointer or slice of type t held in ops
// (its pointer generic, as a cell holds it), addressing what pi says:
// the pointer converted back to pi's space, or v unchanged.
func (kb *kernelBuilder) fromSlots(ops []ir.Operand, pi ptrInfo) *val {
	if !knownSpace(pi) || len(ops) == 0 {
		return &val{ops: ops, space: ir.Generic, origin: -1}
	}
	r := kb.b.New(ir.U64)
	kb.b.Cvta(pi.space, true, r, ops[0])
	return &val{ops: append([]ir.Operand{ir.R(r)}, ops[1:]...), space: pi.space, origin: pi.origin, mask: pi.mask}
}

// joinSlots joins two slot lists of one struct type; nil is unknown.
func joinSlots(a, b []ptrInfo) []ptrInfo {
	if a == nil || b == nil || len(a) != len(b) {
		return nil
	}
	out := make([]ptrInfo, len(a))
	for i := range a {
		if a[i].set != b[i].set {
			out[i] = unknownPtr
			continue
		}
		out[i] = joinPtr(a[i], b[i])
	}
	return out
}
