package compiler

// Lowering of memory: local variables (in registers when every index is
// constant, else in .local memory), slice and array indexing with device
// bounds checks, loads, stores and re-slicing.

import (
	"fmt"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// ptrInfo is what the pre-pass knows about a pointer or slice value.
type ptrInfo struct {
	space ir.Space
	// origin is the kernel parameter the value points into (≥ 0), or
	// manyOrigins with the candidates in mask, or -1: no parameter for
	// shared and local pointers, any parameter for global and generic ones.
	origin int
	mask   uint64
	set    bool
}

// manyOrigins marks a pointer that may point into any of several slice
// parameters, listed in its mask (a phi of two parameters' pointers).
const manyOrigins = -2

// originSet returns the parameters a pointer may point into, as a mask;
// any is true when it may point into every one.
func originSet(space ir.Space, origin int, mask uint64) (bits uint64, any bool) {
	switch {
	case origin >= 64:
		return 0, true
	case origin >= 0:
		return 1 << origin, false
	case origin == manyOrigins:
		return mask, false
	case space == ir.Shared || space == ir.Local:
		return 0, false
	}
	return 0, true
}

// pointerSpaces computes the state space of every pointer and slice value
// of fn. Values from different spaces merging in a phi fall back to
// generic addressing; pointers from different parameters keep the set of
// parameters they may point into.
func pointerSpaces(fn *ssa.Function, args []*val) map[ssa.Value]ptrInfo {
	m := map[ssa.Value]ptrInfo{}
	for i, p := range fn.Params {
		if a := args[i]; a != nil {
			m[p] = ptrInfo{a.space, a.origin, a.mask, true}
		}
	}
	join := joinPtr
	for changed := true; changed; {
		changed = false
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				v, ok := instr.(ssa.Value)
				if !ok {
					continue
				}
				var pi ptrInfo
				switch v := v.(type) {
				case *ssa.Alloc:
					pi = ptrInfo{ir.Local, -1, 0, true}
				case *ssa.IndexAddr:
					pi = m[v.X]
				case *ssa.FieldAddr:
					pi = m[v.X]
				case *ssa.Slice:
					pi = m[v.X]
				case *ssa.ChangeType:
					pi = m[v.X]
				case *ssa.SliceToArrayPointer:
					pi = m[v.X]
				case *ssa.Phi:
					for _, e := range v.Edges {
						pi = join(pi, m[e])
					}
				case *ssa.Call:
					if fn := v.Call.StaticCallee(); fn != nil {
						if name, ok := gpuIntrinsicName(fn); ok && (name == "Shared" || name == "DynShared") {
							pi = ptrInfo{ir.Shared, -1, 0, true}
						}
					}
					if !pi.set && isPointerLike(v.Type()) {
						pi = ptrInfo{ir.Generic, -1, 0, true} // a helper's result: unknown here
					}
				default:
					if !isPointerLike(v.Type()) {
						continue
					}
					// A pointer or slice from memory or a tuple: it may point
					// anywhere.
					pi = ptrInfo{ir.Generic, -1, 0, true}
				}
				if pi.set && pi != m[v] {
					m[v], changed = pi, true
				}
			}
		}
	}
	return m
}

func isPointerLike(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Slice:
		return true
	}
	return false
}

// promotable returns the non-escaping local variables every use of which
// addresses a constant element or field: those live in registers.
func promotable(fn *ssa.Function, isConst func(ssa.Value) bool) map[*ssa.Alloc]bool {
	out := map[*ssa.Alloc]bool{}
	var ok func(v ssa.Value) bool
	ok = func(v ssa.Value) bool {
		refs := v.Referrers()
		if refs == nil {
			return true
		}
		for _, r := range *refs {
			switch r := r.(type) {
			case *ssa.DebugRef:
			case *ssa.IndexAddr:
				if !isConst(r.Index) || !ok(r) {
					return false
				}
			case *ssa.FieldAddr:
				if !ok(r) {
					return false
				}
			case *ssa.UnOp:
				if r.Op != token.MUL {
					return false
				}
			case *ssa.Store:
				if r.Val == v {
					return false
				}
			case *ssa.Call:
				// The in-place accumulator of a wgmma (lower_hopper.go).
				if !inPlaceAccumulator(r, v) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			// An address passed to a wgmma marks the variable Heap; it
			// still lives in registers unless it escapes.
			if a, isAlloc := instr.(*ssa.Alloc); isAlloc && (!a.Heap || !escapes(a, map[ssa.Value]bool{})) && ok(a) {
				out[a] = true
			}
		}
	}
	return out
}

func (kb *kernelBuilder) lowerAlloc(fr *frame, a *ssa.Alloc) {
	elem := a.Type().(*types.Pointer).Elem()
	// go/ssa marks every variable whose address is taken (&x, x[:]) Heap;
	// a thread's .local memory lives as long as the thread, so only an
	// address that is stored in memory really needs the heap.
	if a.Heap && escapes(a, map[ssa.Value]bool{}) {
		what := "this variable's address escapes, so it would be heap-allocated"
		if a.Comment == "new" || a.Comment == "complit" {
			what = "this allocates on the heap"
		}
		kb.d.errorf(posOfValue(a), HeapAllocation, "%s, which kernels cannot do: use gpu.Shared, a local array, or a buffer parameter", what)
		// Generic, so that storing the address does not repeat the error.
		fr.vals[a] = &val{ops: []ir.Operand{ir.Imm(ir.U64, 0)}, space: ir.Generic, origin: -1}
		return
	}
	fl, ok := flatten(elem)
	if !ok {
		kb.d.errorf(posOfValue(a), UnsupportedType, "local variables of type %s are not supported in kernels", typeName(elem))
		fr.vals[a] = &val{ops: []ir.Operand{ir.Imm(ir.U64, 0)}, space: ir.Local, origin: -1}
		return
	}
	if fr.promoted[a] {
		cells := make([]ir.Reg, len(fl))
		for i, t := range fl {
			cells[i] = kb.b.New(t)
			kb.b.Mov(t, cells[i], zeroOf(t))
			if kb.bounds && fr.ranges != nil {
				kb.setRegRange(cells[i], fr.ranges.cell(a, i))
			}
		}
		fr.vals[a] = &val{cells: cells, origin: -1, space: ir.Local, slots: fr.cellSlots[a]}
		return
	}
	size := sizes.Sizeof(elem)
	align := sizes.Alignof(elem)
	v := &ir.Var{Name: fmt.Sprintf("local%d", kb.nlocal), Space: ir.Local, Align: int(max(align, 4)), Size: int(max(size, 1))}
	kb.nlocal++
	kb.f.Vars = append(kb.f.Vars, v)
	addr := kb.b.New(ir.U64)
	kb.b.Mov(ir.U64, addr, ir.Sym(v.Name))
	p := &val{ops: []ir.Operand{ir.R(addr)}, space: ir.Local, origin: -1}
	kb.storeMem(p, elem, kb.zeroVal(elem))
	fr.vals[a] = p
}

// escapes reports whether the address v (of a local variable, or derived
// from one) may be stored in memory, converted to an interface or captured:
// anything other than loads and stores through it, taking element or field
// addresses, slicing, len and cap, comparisons, and passing it to a helper
// or intrinsic (inlined, so the helper's stores are checked by lowerStore).
func escapes(v ssa.Value, seen map[ssa.Value]bool) bool {
	if seen[v] {
		return false
	}
	seen[v] = true
	refs := v.Referrers()
	if refs == nil {
		return false
	}
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.DebugRef, *ssa.BinOp:
		case *ssa.UnOp:
			if r.Op != token.MUL {
				return true
			}
		case *ssa.Store:
			if r.Val == v {
				return true
			}
		case *ssa.IndexAddr, *ssa.FieldAddr, *ssa.Slice, *ssa.ChangeType, *ssa.Phi:
			if escapes(r.(ssa.Value), seen) {
				return true
			}
		case *ssa.Call:
			if r.Call.IsInvoke() {
				return true
			}
			if _, ok := r.Call.Value.(*ssa.Builtin); ok {
				continue
			}
			if r.Call.StaticCallee() == nil {
				return true
			}
		default:
			return true
		}
	}
	return false
}

func zeroOf(t ir.Type) ir.Operand {
	if t == ir.Pred {
		return ir.Imm(ir.Pred, 0)
	}
	return ir.Imm(t.RegType(), 0)
}

// layout is the byte offset of each flattened scalar of t in memory.
func layout(t types.Type) []int64 {
	switch u := t.Underlying().(type) {
	case *types.Array:
		e := layout(u.Elem())
		sz := sizes.Sizeof(u.Elem())
		var out []int64
		for i := int64(0); i < u.Len(); i++ {
			for _, o := range e {
				out = append(out, i*sz+o)
			}
		}
		return out
	case *types.Struct:
		fields := make([]*types.Var, u.NumFields())
		for i := range fields {
			fields[i] = u.Field(i)
		}
		offs := sizes.Offsetsof(fields)
		var out []int64
		for i, f := range fields {
			for _, o := range layout(f.Type()) {
				out = append(out, offs[i]+o)
			}
		}
		return out
	case *types.Slice:
		return []int64{0, 8, 16}
	}
	return []int64{0}
}

// flatOffset is the index of field i's first scalar in flatten(struct).
func flatOffset(st *types.Struct, field int) int {
	n := 0
	for i := 0; i < field; i++ {
		n += flatLen(st.Field(i).Type())
	}
	return n
}

func (kb *kernelBuilder) loadMem(p *val, t types.Type) *val {
	fl, _ := flatten(t)
	offs := layout(t)
	out := &val{origin: -1}
	base := kb.reg(p.ops[0], ir.U64)
	for i, st := range fl {
		r := kb.b.New(st)
		mt := st
		if st == ir.Pred {
			mt = ir.U8
			r = kb.b.New(ir.U32)
		}
		kb.b.Ld(p.space, false, mt, ir.R(r), ir.Addr(base, offs[i]))
		kb.noteGlobalLoad(p)
		if st == ir.Pred {
			pr := kb.b.New(ir.Pred)
			kb.b.Setp(ir.NE, ir.U32, pr, ir.R(r), ir.Imm(ir.U32, 0))
			r = pr
		}
		out.ops = append(out.ops, ir.R(r))
	}
	return out
}

func (kb *kernelBuilder) storeMem(p *val, t types.Type, v *val) {
	fl, _ := flatten(t)
	offs := layout(t)
	base := kb.reg(p.ops[0], ir.U64)
	kb.noteWrite(p)
	for i, st := range fl {
		src := v.ops[i]
		if st == ir.Pred {
			r := kb.b.New(ir.U32)
			kb.b.Selp(ir.U32, r, ir.Imm(ir.U32, 1), ir.Imm(ir.U32, 0), kb.predReg(&val{ops: []ir.Operand{src}}))
			src, st = ir.R(r), ir.U8
		} else {
			src = ir.R(kb.reg(src, st))
		}
		kb.b.St(p.space, st, ir.Addr(base, offs[i]), src)
	}
}

// noteWrite records that memory a pointer reaches may be written.
func (kb *kernelBuilder) noteWrite(p *val) {
	bits, any := originSet(p.space, p.origin, p.mask)
	for i := range kb.writes {
		if any || i < 64 && bits>>i&1 == 1 {
			kb.writes[i] = true
		}
	}
}

// noteGlobalLoad records the ld.global just emitted through p, which
// becomes ld.global.nc if no parameter p may point into is written.
func (kb *kernelBuilder) noteGlobalLoad(p *val) {
	if p.space != ir.Global {
		return
	}
	if bits, any := originSet(p.space, p.origin, p.mask); !any && bits != 0 {
		kb.globalLoads = append(kb.globalLoads, globalLoad{kb.b.B.Instrs[len(kb.b.B.Instrs)-1], bits})
	}
}

// globalLoad is an ld.global and the parameters its address may be in.
type globalLoad struct {
	in     *ir.Instr
	params uint64
}

func (kb *kernelBuilder) lowerStore(fr *frame, s *ssa.Store) {
	if kb.groupStore(fr, s) {
		return
	}
	p := kb.value(fr, s.Addr)
	v := kb.value(fr, s.Val)
	t := s.Val.Type()
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Slice:
		// A pointer read back from memory is addressed generically (its
		// space is not tracked through memory), so store it generic.
		if v.cells != nil || v.space == ir.Local {
			kb.d.errorf(s.Pos(), HeapAllocation, "storing the address of a local variable makes it escape to the heap, which kernels cannot do: index the variable directly, or use gpu.Shared or a buffer parameter")
			return
		}
		v = kb.toSpace(v, ir.Generic)
	}
	if p.cells != nil {
		for i, o := range v.ops {
			r := p.cells[p.off+i]
			kb.b.Mov(kb.f.Regs[r], r, o)
		}
		return
	}
	kb.storeMem(p, t, v)
}

// load lowers *p.
func (kb *kernelBuilder) load(fr *frame, p *val, t types.Type) *val {
	if p.cells != nil {
		n := flatLen(t)
		out := &val{origin: -1}
		for i := 0; i < n; i++ {
			c := p.cells[p.off+i]
			r := kb.b.New(kb.f.Regs[c])
			kb.b.Mov(kb.f.Regs[c], r, ir.R(c))
			if iv, ok := kb.regRange[c]; ok {
				kb.setRegRange(r, iv)
			}
			out.ops = append(out.ops, ir.R(r))
		}
		if p.slots != nil {
			sl := p.slots[p.off : p.off+n]
			if isPointerLike(t) {
				return kb.fromSlots(out.ops, sl[0])
			}
			if _, ok := t.Underlying().(*types.Struct); ok {
				out.slots = sl
			}
		}
		return out
	}
	return kb.loadMem(p, t)
}

// index64 widens an integer index operand to s64.
func (kb *kernelBuilder) index64(o ir.Operand, t types.Type) ir.Operand {
	st := scalarType(t)
	if o.Kind == ir.KImm {
		return ir.Imm(ir.S64, signExtend(o.Imm, st))
	}
	if st == ir.S64 || st == ir.U64 {
		return o
	}
	r := kb.b.New(ir.S64)
	kb.b.Cvt(widen64(st), st, "", r, o)
	return ir.R(r)
}

func widen64(t ir.Type) ir.Type {
	if t.IsSigned() {
		return ir.S64
	}
	return ir.U64
}

func signExtend(bits uint64, t ir.Type) uint64 {
	switch t {
	case ir.S8:
		return uint64(int64(int8(bits)))
	case ir.S16:
		return uint64(int64(int16(bits)))
	case ir.S32:
		return uint64(int64(int32(bits)))
	case ir.U8:
		return bits & 0xff
	case ir.U16:
		return bits & 0xffff
	case ir.U32:
		return bits & 0xffffffff
	}
	return bits
}

// checkBounds emits the device bounds check idx < n (unsigned, so a
// negative index fails too) unless checks are off or the analysis proved
// it.
func (kb *kernelBuilder) checkBounds(idx, n ir.Operand, pos token.Pos) {
	if !kb.bounds {
		return
	}
	if idx.Kind == ir.KImm && n.Kind == ir.KImm {
		if idx.Imm < n.Imm {
			kb.noteCheck(pos, false)
			return
		}
	}
	kb.noteCheck(pos, true)
	p := kb.b.New(ir.Pred)
	kb.b.Setp(ir.HS, ir.U64, p, idx, n)
	kb.failWhen(p, "oob", kb.posString(pos), idx, n)
}

// failWhen branches, when p holds, to a block of its own that reports a
// new site (described by desc, with an index and length) through the
// error slot.
func (kb *kernelBuilder) failWhen(p ir.Reg, hint, desc string, idx, n ir.Operand) {
	kb.failHandler() // created first, so block numbering follows the source
	blk := kb.f.NewBlock(fmt.Sprintf("%s%d", hint, len(kb.k.Sites)))
	saved := kb.b.B
	kb.b.B = blk
	kb.reportFailure(desc, idx, n)
	kb.b.B = saved
	kb.b.BraIf(p, false, blk)
}

// reportFailure ends the current block with a jump to the failure handler,
// reporting a new site described by desc with an index and length.
func (kb *kernelBuilder) reportFailure(desc string, idx, n ir.Operand) {
	site := kb.addSite(desc)
	handler := kb.failHandler()
	kb.b.Mov(ir.U32, kb.failRegs[0], ir.Imm(ir.U32, kb.siteCode(site)))
	kb.b.Mov(ir.U64, kb.failRegs[1], idx)
	kb.b.Mov(ir.U64, kb.failRegs[2], n)
	kb.b.Bra(handler)
}

func (kb *kernelBuilder) posString(pos token.Pos) string {
	p := kb.fset.Position(pos)
	if !p.IsValid() {
		return "?"
	}
	return fmt.Sprintf("%s:%d:%d", baseName(p.Filename), p.Line, p.Column)
}

func baseName(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' || s[i] == '\\' {
			return s[i+1:]
		}
	}
	return s
}

// failHandler returns the block that records the first failing check of a
// launch in the error slot and ends the thread. The record's layout is
// ErrorSlot's: a u32 compare-and-swap of the site code elects the failing
// thread that writes the rest, the index and length go in one v2.u64
// store, the thread as raw u32 special registers, the block as one packed
// u64. A kernel's SASS carries this block once (ptxas compiles a module
// whole, so a .func would be cloned into every kernel's text all the
// same), and each site's block only moves its site code, index and
// length here.
func (kb *kernelBuilder) failHandler() *ir.Block {
	if kb.fail != nil {
		return kb.fail
	}
	saved, savedPos := kb.b.B, kb.b.Pos
	kb.failRegs = [3]ir.Reg{kb.b.New(ir.U32), kb.b.New(ir.U64), kb.b.New(ir.U64)}
	kb.fail = kb.f.NewBlock("bounds_fail")
	done := kb.f.NewBlock("bounds_exit")
	kb.b.B, kb.b.Pos = kb.fail, token.NoPos
	old := kb.b.New(ir.U32)
	kb.b.Atom(ir.Global, "cas", ir.B32, old, ir.SymAddr(ErrorSlot, slotCode), ir.Imm(ir.B32, 0), ir.R(kb.failRegs[0]))
	taken := kb.b.New(ir.Pred)
	kb.b.Setp(ir.NE, ir.U32, taken, ir.R(old), ir.Imm(ir.U32, 0))
	kb.b.BraIf(taken, false, done)
	kb.b.St(ir.Global, ir.U64, ir.SymAddr(ErrorSlot, slotIndex), ir.Vec(kb.failRegs[1], kb.failRegs[2]))
	r := [3]ir.Reg{kb.b.New(ir.U32), kb.b.New(ir.U32), kb.b.New(ir.U32)}
	kb.storeThread(r)
	// The block packed in a u64, ctaid.x | (ctaid.y | ctaid.z<<16)<<32
	// (one mad: y and z are below 2^16), built in 64 bits: raw ctaid
	// registers in vector stores made ptxas keep the body's copies of
	// them live to the handler and raised some kernels' register counts
	// by 6 or 7 (ptxas 13.5).
	for i, sr := range []string{"%ctaid.x", "%ctaid.y", "%ctaid.z"} {
		kb.b.Mov(ir.U32, r[i], ir.Special(sr))
	}
	kb.b.Emit(ir.OpMad, "mad.lo.u32", ir.R(r[1]), ir.R(r[2]), ir.Imm(ir.U32, 1<<16), ir.R(r[1]))
	w := [2]ir.Reg{kb.b.New(ir.U64), kb.b.New(ir.U64)}
	kb.b.Cvt(ir.U64, ir.U32, "", w[0], ir.R(r[0]))
	kb.b.Cvt(ir.U64, ir.U32, "", w[1], ir.R(r[1]))
	kb.b.Shift(ir.OpShl, ir.B64, w[1], ir.R(w[1]), ir.Imm(ir.U32, 32))
	kb.b.Arith(ir.OpOr, ir.B64, w[0], ir.R(w[0]), ir.R(w[1]))
	kb.b.St(ir.Global, ir.U64, ir.SymAddr(ErrorSlot, slotBlock), ir.R(w[0]))
	kb.b.Bra(done)
	kb.b.B = done
	kb.b.Exit()
	kb.b.B, kb.b.Pos = saved, savedPos
	return kb.fail
}

func (kb *kernelBuilder) lowerIndexAddr(fr *frame, in *ssa.IndexAddr) *val {
	x := kb.value(fr, in.X)
	idx := kb.value(fr, in.Index).ops[0]
	pos := in.Pos()
	var elem types.Type
	var n ir.Operand
	switch t := in.X.Type().Underlying().(type) {
	case *types.Slice:
		elem = t.Elem()
		n = x.ops[1]
	case *types.Pointer:
		arr := t.Elem().Underlying().(*types.Array)
		elem = arr.Elem()
		n = ir.Imm(ir.S64, uint64(arr.Len()))
		if x.cells != nil {
			k := int64(signExtend(idx.Imm, scalarType(in.Index.Type())))
			if !kb.constIndexInRange(k, arr.Len(), pos) {
				fl, _ := flatten(elem)
				cells := make([]ir.Reg, len(fl))
				for i, t := range fl {
					cells[i] = kb.b.New(t)
				}
				return &val{cells: cells, origin: -1, space: ir.Local}
			}
			return &val{cells: x.cells, off: x.off + int(k)*flatLen(elem), origin: -1, space: ir.Local, slots: x.slots}
		}
	default:
		kb.d.errorf(pos, UnsupportedType, "indexing a %s is not supported in kernels", typeName(in.X.Type()))
		return kb.zeroVal(in.Type())
	}
	i64 := kb.index64(idx, in.Index.Type())
	if j, ok := fr.ivOf[in]; ok && fr.checkedAbove[in] {
		delete(fr.ivOf, in)
		i64 = j
	}
	if kb.pairIndex(fr, in, x, i64, n) {
		// pack2.go checked it (or checks it with its pair's)
	} else if fr.factSafe[in] && kb.bounds {
		kb.noteCheck(pos, false) // proven by a launch fact (launchfact.go)
	} else if fr.hoisted[in] != nil && kb.bounds {
		kb.noteHoisted(pos)
	} else if fr.checkedAbove[in] {
		delete(fr.checkedAbove, in) // liftcheck.go checked it before the branch
	} else if !fr.safe[in] {
		kb.checkBounds(i64, n, pos)
	} else if kb.bounds {
		kb.noteCheck(pos, false)
	}
	size := sizes.Sizeof(elem)
	if pl := fr.hoisted[in]; pl != nil && kb.bounds {
		if a := pl.accessOf(in); a.g != nil && a.g.ptr >= 0 {
			return &val{ops: []ir.Operand{kb.hoistedAddr(a)}, space: x.space, origin: x.origin, mask: x.mask}
		}
	}
	if a, ok := kb.sharedAddr(x, i64, size); ok {
		return &val{ops: []ir.Operand{a}, space: x.space, origin: x.origin, mask: x.mask}
	}
	if a, ok := kb.addOffset32(x, i64, size); ok {
		return &val{ops: []ir.Operand{a}, space: x.space, origin: x.origin, mask: x.mask}
	}
	return &val{ops: []ir.Operand{kb.addOffset(x.ops[0], i64, size)}, space: x.space, origin: x.origin, mask: x.mask}
}

// constIndexInRange reports whether constant index k is in [0, n). One
// that is not (an unrolled loop's counter run past an array) is not an
// error at compile time: as in Go, the access fails when it runs, so the
// device check is emitted unconditionally.
func (kb *kernelBuilder) constIndexInRange(k, n int64, pos token.Pos) bool {
	if k >= 0 && k < n {
		return true
	}
	kb.checkBounds(ir.R(kb.reg(ir.Imm(ir.S64, uint64(k)), ir.S64)), ir.Imm(ir.S64, uint64(n)), pos)
	return false
}

// addOffset returns base + i*size as a u64 operand.
func (kb *kernelBuilder) addOffset(base, i ir.Operand, size int64) ir.Operand {
	if i.Kind == ir.KImm {
		off := int64(i.Imm) * size
		if off == 0 {
			return base
		}
		r := kb.b.New(ir.U64)
		kb.b.Arith(ir.OpAdd, ir.S64, r, base, ir.Imm(ir.S64, uint64(off)))
		return ir.R(r)
	}
	scaled := kb.b.New(ir.S64)
	if size&(size-1) == 0 {
		sh := 0
		for s := size; s > 1; s >>= 1 {
			sh++
		}
		kb.b.Shift(ir.OpShl, ir.S64, scaled, i, ir.Imm(ir.U32, uint64(sh)))
	} else {
		kb.b.Arith(ir.OpMul, ir.S64, scaled, i, ir.Imm(ir.S64, uint64(size)))
	}
	r := kb.b.New(ir.U64)
	kb.b.Arith(ir.OpAdd, ir.S64, r, base, ir.R(scaled))
	return ir.R(r)
}

func (kb *kernelBuilder) lowerFieldAddr(fr *frame, in *ssa.FieldAddr) *val {
	x := kb.value(fr, in.X)
	st := in.X.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Struct)
	if x.cells != nil {
		return &val{cells: x.cells, off: x.off + flatOffset(st, in.Field), origin: -1, space: ir.Local, slots: x.slots}
	}
	fields := make([]*types.Var, st.NumFields())
	for i := range fields {
		fields[i] = st.Field(i)
	}
	off := sizes.Offsetsof(fields)[in.Field]
	return &val{ops: []ir.Operand{kb.addOffset(x.ops[0], ir.Imm(ir.S64, 1), off)}, space: x.space, origin: x.origin, mask: x.mask}
}

func (kb *kernelBuilder) lowerSlice(fr *frame, in *ssa.Slice) *val {
	if in.Max != nil {
		kb.d.errorf(in.Pos(), UnsupportedConstruct, "three-index slices are not supported in kernels")
		return kb.zeroVal(in.Type())
	}
	x := kb.value(fr, in.X)
	var elem types.Type
	var ptr, n, capOp ir.Operand
	switch t := in.X.Type().Underlying().(type) {
	case *types.Slice:
		elem, ptr, n, capOp = t.Elem(), x.ops[0], x.ops[1], x.ops[2]
	case *types.Pointer:
		arr, ok := t.Elem().Underlying().(*types.Array)
		if !ok || x.cells != nil {
			kb.d.errorf(in.Pos(), UnsupportedConstruct, "slicing a %s is not supported in kernels", typeName(in.X.Type()))
			return kb.zeroVal(in.Type())
		}
		elem, ptr = arr.Elem(), x.ops[0]
		n = ir.Imm(ir.S64, uint64(arr.Len()))
		capOp = n
	default:
		kb.d.errorf(in.Pos(), UnsupportedType, "slicing a %s is not supported in kernels", typeName(in.X.Type()))
		return kb.zeroVal(in.Type())
	}
	lo, hi := ir.Imm(ir.S64, 0), n
	if in.Low != nil {
		lo = kb.index64(kb.value(fr, in.Low).ops[0], in.Low.Type())
	}
	if in.High != nil {
		hi = kb.index64(kb.value(fr, in.High).ops[0], in.High.Type())
	}
	hasLow := in.Low != nil
	if hasLow && lowBoundChecked(in) {
		hasLow = false
		kb.noteCheck(in.Pos(), false)
	}
	kb.checkSliceBounds(lo, hi, capOp, hasLow, in.High != nil, in.Pos())
	nl := kb.b.New(ir.S64)
	kb.b.Arith(ir.OpSub, ir.S64, nl, hi, lo)
	nc := kb.b.New(ir.S64)
	kb.b.Arith(ir.OpSub, ir.S64, nc, capOp, lo)
	p := kb.addOffset(ptr, lo, sizes.Sizeof(elem))
	al := x.align
	if in.Low != nil {
		al = min(al, fr.align.tzAt(in.Low, in.Block())+log2Size(sizes.Sizeof(elem)))
	}
	return &val{ops: []ir.Operand{p, ir.R(nl), ir.R(nc)}, space: x.space, origin: x.origin, mask: x.mask, align: al}
}

// toSpace converts a pointer or slice to generic addressing when the
// destination expects it.
func (kb *kernelBuilder) toSpace(v *val, s ir.Space) *val {
	if v.cells != nil || v.space == s || s != ir.Generic || len(v.ops) == 0 {
		return v
	}
	r := kb.b.New(ir.U64)
	kb.b.Cvta(v.space, false, r, v.ops[0])
	out := *v
	out.ops = append([]ir.Operand{ir.R(r)}, v.ops[1:]...)
	out.space = ir.Generic
	return &out
}

// lowerSliceToArrayPointer lowers (*[N]T)(s) and, with a load after it,
// [N]T(s): the slice's pointer, after checking len(s) >= N as Go does
// (spec: "if the length of the slice is less than the length of the
// array, a run-time panic occurs").
func (kb *kernelBuilder) lowerSliceToArrayPointer(fr *frame, in *ssa.SliceToArrayPointer) *val {
	x := kb.value(fr, in.X)
	n := in.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Array).Len()
	if n > 0 {
		kb.checkBounds(ir.Imm(ir.S64, uint64(n-1)), x.ops[1], in.Pos())
	}
	return &val{ops: []ir.Operand{x.ops[0]}, space: x.space, origin: x.origin, mask: x.mask}
}
