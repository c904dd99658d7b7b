package compiler

// Lowering of go/ssa functions to ir: blocks, phis, terminators and the
// instruction switch. Expressions are in lower_expr.go, memory in
// lower_mem.go, calls and inlining in lower_call.go.

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// val is a lowered SSA value: the scalars of its flattened type, plus,
// for pointers and slices, where they point.
type val struct {
	ops []ir.Operand
	// space is the state space a pointer or slice addresses.
	space ir.Space
	// origin and mask say which kernel parameters a pointer or slice may
	// point into (see ptrInfo).
	origin int
	mask   uint64
	// cells, when non-nil, means the value is a pointer into a local
	// variable held in registers: it points at cells[off:].
	cells []ir.Reg
	off   int
	// align is log2 of the byte alignment a pointer or slice is known to
	// have (0: none beyond its element's natural one); see align.go.
	align int
	// slots, for a struct value (or a promoted local's cells), says per
	// flattened slot what the generic pointer in it may address; nil when
	// unknown (structptr.go).
	slots []ptrInfo
}

// frame is one activation being lowered: the kernel itself or an inlined
// helper.
type frame struct {
	fn     *ssa.Function
	vals   map[ssa.Value]*val
	blocks []*ir.Block
	ret    *ir.Block // inlined helpers: where returns jump
	result []ir.Reg  // inlined helpers: the flattened results
	resT   []ir.Type
	uni    *uniformity
	// promoted lists local Allocs kept in registers.
	promoted map[*ssa.Alloc]bool
	// cellSlots is, per promoted struct local, what its pointer fields may
	// address (structptr.go).
	cellSlots map[*ssa.Alloc][]ptrInfo
	// retSlots joins the slots of an inlined helper's struct results;
	// retUnknown is set once a return has none.
	retSlots   []ptrInfo
	retUnknown bool
	// retRng joins the intervals of what the returns move into each
	// result register (retSeen: some return did), regrange.go.
	retRng  []interval
	retSeen []bool
	safe    map[*ssa.IndexAddr]bool
	// factSafe marks the accesses of safe that a launch fact proves
	// (launchfact.go): hoist.go still walks their pointers.
	factSafe map[*ssa.IndexAddr]bool
	// hoists are the loops whose checks are hoisted (hoist.go), by
	// header, and hoisted the accesses whose checks they took over.
	hoists  map[*ssa.BasicBlock]*hoistLoop
	hoisted map[*ssa.IndexAddr]*hoistLoop
	// ranges is the range analysis of this activation (nil with
	// Config.KeepChecks, the unoptimised reference).
	ranges *rangeCtx
	spaces map[ssa.Value]ptrInfo
	// unrolled maps the header of each //kern:unroll loop to it; active
	// is the stack of those being lowered.
	unrolled map[*ssa.BasicBlock]*unrollLoop
	// nounroll marks the headers of loops written //kern:nounroll.
	nounroll map[*ssa.BasicBlock]bool
	active   []*unrollLoop
	// reached marks the blocks of active unrolled loops that a branch of
	// the current iteration targets; the others are dead in it.
	reached map[*ssa.BasicBlock]bool
	// align is the alignment analysis of this activation, pairs the
	// gpu.PackHalf2 loads lowered as one 32-bit load (pack2.go).
	align *alignCtx
	pairs map[ssa.Instruction]*pack2Pair
	// groups are the adjacent accesses lowered as one vector access
	// (vecmerge.go).
	groups map[ssa.Instruction]*vecGroup
	// partial maps the header of each //kern:unroll N loop to it;
	// partialActive is the stack of those being lowered (unroll_partial.go).
	partial       map[*ssa.BasicBlock]*partialLoop
	partialActive []*partialLoop
	// merged marks the blocks whose test lowerAndChain folded into their
	// predecessor's (condmerge.go); lowerBlocks skips them.
	merged map[*ssa.BasicBlock]bool
	// lifted marks the instructions liftChecks lowered before the branch
	// into their block (liftcheck.go); lowerBlocks skips them once.
	lifted       map[ssa.Instruction]bool
	checkedAbove map[*ssa.IndexAddr]bool
	// loopy marks the blocks in loops that are not unrolled, once
	// narrowadd.go asks.
	loopy   map[*ssa.BasicBlock]bool
	ivLoops map[*ssa.BasicBlock]*ivLoop
	ivOf    map[*ssa.IndexAddr]ir.Operand
}

func (kb *kernelBuilder) lowerKernel(fn *ssa.Function) {
	kb.b = ir.Builder{F: kb.f}
	entry := kb.f.NewBlock("entry")
	kb.b.B = entry
	kb.b.Pos = fn.Pos()
	// Parameters.
	args := []*val{{}} // gpu.Thread carries nothing
	for i, p := range kb.params {
		switch p.Kind {
		case Slice:
			ptr := kb.b.New(ir.U64)
			kb.b.Ld(ir.ParamSpace, false, ir.U64, ir.R(ptr), ir.SymAddr(p.PTX[0].Name, 0))
			gptr := kb.b.New(ir.U64)
			kb.b.Cvta(ir.Global, true, gptr, ir.R(ptr))
			n := kb.b.New(ir.S64)
			kb.b.Ld(ir.ParamSpace, false, ir.S64, ir.R(n), ir.SymAddr(p.PTX[1].Name, 0))
			kb.noteIdx32Param(n, ir.S64, true)
			kb.noteLaunchParam(n, i, true)
			args = append(args, &val{ops: []ir.Operand{ir.R(gptr), ir.R(n), ir.R(n)}, space: ir.Global, origin: i, align: bufferAlign})
		default:
			pt := p.PTX[0].Type
			st := scalarType(fn.Params[i+1].Type())
			r := kb.b.New(pt)
			kb.b.Ld(ir.ParamSpace, false, pt, ir.R(r), ir.SymAddr(p.PTX[0].Name, 0))
			kb.noteIdx32Param(r, st, false)
			if st == ir.S64 {
				kb.noteLaunchParam(r, i, false)
			}
			if st == ir.Pred {
				pr := kb.b.New(ir.Pred)
				kb.b.Setp(ir.NE, ir.U32, pr, ir.R(r), ir.Imm(ir.U32, 0))
				r = pr
			}
			args = append(args, &val{ops: []ir.Operand{ir.R(r)}, origin: -1})
		}
	}
	params := make([]level, len(args))
	fr := kb.newFrame(fn, args, params, uniform)
	if fr == nil {
		return
	}
	if kb.pdlOption {
		kb.pdlEntry()
	}
	kb.b.Bra(fr.blocks[0])
	kb.lowerBody(fr)
	kb.pdlFinish(entry)
	if kb.fail != nil {
		kb.f.Blocks = append(kb.f.Blocks[:kb.fail.Index], kb.f.Blocks[kb.fail.Index+1:]...)
		kb.f.Blocks = append(kb.f.Blocks, kb.fail)
		for i, b := range kb.f.Blocks {
			b.Index = i
		}
	}
}

// newFrame prepares an activation of fn with the given argument values.
func (kb *kernelBuilder) newFrame(fn *ssa.Function, args []*val, params []level, base level) *frame {
	fr := &frame{fn: fn, vals: map[ssa.Value]*val{}}
	for i, p := range fn.Params {
		fr.vals[p] = args[i]
	}
	fr.uni = kb.analyzeUniformity(fn, params, base)
	fr.spaces = pointerSpaces(fn, args)
	fr.unrolled = kb.findUnrolled(fn)
	fr.nounroll = kb.findNoUnroll(fn)
	fr.partial = kb.findPartial(fn)
	fr.promoted = promotable(fn, fr.unrollConst)
	fr.cellSlots = structFieldSpaces(fn, fr.promoted, fr.spaces, args)
	fr.safe, fr.ranges = kb.provablySafe(fn, args, fr.promoted)
	fr.align = newAlignCtx(fn, kb.argTZ)
	kb.argTZ = nil
	kb.proveByLaunchFacts(fr)
	fr.pairs = findPack2Pairs(fn, fr.align)
	fr.groups = findVecGroups(fn, fr.align, fr.pairs)
	fr.hoisted = map[*ssa.IndexAddr]*hoistLoop{}
	fr.hoists = kb.planHoists(fr)
	fr.ivLoops = kb.planIVLoops(fr)
	fr.blocks = make([]*ir.Block, len(fn.Blocks))
	for i, b := range fn.Blocks {
		fr.blocks[i] = kb.f.NewBlock(blockHint(fn, b))
	}
	return fr
}

func blockHint(fn *ssa.Function, b *ssa.BasicBlock) string {
	c := b.Comment
	if c == "" {
		c = "b"
	}
	out := []byte{}
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' {
			out = append(out, ch)
		} else {
			out = append(out, '_')
		}
	}
	return string(out)
}

// lowerBody lowers every block of the frame in dominator preorder, so a
// value's definition is lowered before its uses (phis excepted).
func (kb *kernelBuilder) lowerBody(fr *frame) {
	kb.lowerBlocks(fr, fr.fn.DomPreorder())
	// Unreachable blocks (DomPreorder skips them) still need a terminator.
	for _, blk := range fr.blocks {
		if len(blk.Instrs) == 0 {
			kb.b.B = blk
			kb.b.Exit()
		}
	}
}

// lowerBlocks lowers blocks in the given order; an unrolled loop's header
// lowers the whole loop, whose other blocks are then skipped.
func (kb *kernelBuilder) lowerBlocks(fr *frame, order []*ssa.BasicBlock) {
	skip := map[*ssa.BasicBlock]bool{}
	for _, b := range order {
		if skip[b] || fr.merged[b] || fr.deadInIteration(b) {
			continue
		}
		if l := fr.partial[b]; l != nil && fr.partialAt(b) == nil {
			for lb := range l.blocks {
				skip[lb] = true
			}
			kb.lowerPartial(fr, l)
			continue
		}
		if l := fr.unrolled[b]; l != nil && !fr.isActive(l) {
			for lb := range l.blocks {
				skip[lb] = true
			}
			kb.lowerUnrolled(fr, l)
			continue
		}
		kb.b.B = fr.blocks[b.Index]
		if fr.nounroll[b] {
			kb.b.Pos = token.NoPos
			kb.b.Emit(ir.OpPragma, `.pragma "nounroll"`)
		}
		for _, instr := range b.Instrs {
			if fr.lifted[instr] {
				delete(fr.lifted, instr) // lowered above its guard (liftcheck.go)
				continue
			}
			kb.b.Pos = instr.Pos()
			if !kb.b.Pos.IsValid() {
				if v, ok := instr.(ssa.Value); ok {
					kb.b.Pos = posOfValue(v)
				}
			}
			before := len(kb.f.Regs)
			kb.lowerInstr(fr, instr)
			kb.noteValueRange(fr, instr, before)
		}
	}
}

func (fr *frame) isActive(l *unrollLoop) bool {
	for _, a := range fr.active {
		if a == l {
			return true
		}
	}
	return false
}

func posOfValue(v ssa.Value) token.Pos {
	if p := v.Pos(); p.IsValid() {
		return p
	}
	if ins, ok := v.(ssa.Instruction); ok && ins.Block() != nil {
		if fn := ins.Parent(); fn != nil {
			return fn.Pos()
		}
	}
	return token.NoPos
}

func (kb *kernelBuilder) lowerInstr(fr *frame, instr ssa.Instruction) {
	switch in := instr.(type) {
	case *ssa.DebugRef:
	case *ssa.Phi:
		kb.phiVal(fr, in)
	case *ssa.Jump:
		kb.edge(fr, in.Block(), in.Block().Succs[0])
	case *ssa.If:
		kb.lowerIf(fr, in)
	case *ssa.Return:
		kb.lowerReturn(fr, in)
	case *ssa.Panic:
		kb.lowerPanic(fr, in)
	case *ssa.Store:
		kb.lowerStore(fr, in)
	case *ssa.Alloc:
		kb.lowerAlloc(fr, in)
	case *ssa.BinOp:
		fr.vals[in] = kb.lowerBinOp(fr, in)
	case *ssa.UnOp:
		fr.vals[in] = kb.lowerUnOp(fr, in)
	case *ssa.Convert:
		fr.vals[in] = kb.lowerConvert(fr, in)
	case *ssa.ChangeType:
		fr.vals[in] = kb.value(fr, in.X)
	case *ssa.Call:
		kb.lowerCall(fr, in)
	case *ssa.Extract:
		fr.vals[in] = kb.extract(fr, in)
	case *ssa.Field:
		fr.vals[in] = kb.lowerField(fr, in)
	case *ssa.Index:
		fr.vals[in] = kb.lowerIndex(fr, in)
	case *ssa.IndexAddr:
		fr.vals[in] = kb.lowerIndexAddr(fr, in)
	case *ssa.FieldAddr:
		fr.vals[in] = kb.lowerFieldAddr(fr, in)
	case *ssa.Slice:
		fr.vals[in] = kb.lowerSlice(fr, in)
	case *ssa.SliceToArrayPointer:
		fr.vals[in] = kb.lowerSliceToArrayPointer(fr, in)
	case *ssa.MakeInterface:
		if !onlyPanics(in) {
			kb.reject(fr, instr)
		}
	default:
		kb.reject(fr, instr)
	}
}

// value returns the lowered form of v.
func (kb *kernelBuilder) value(fr *frame, v ssa.Value) *val {
	if lv, ok := fr.vals[v]; ok {
		return lv
	}
	switch v := v.(type) {
	case *ssa.Const:
		return kb.constVal(v)
	case *ssa.Phi:
		return kb.phiVal(fr, v)
	}
	// An invalid value after a reported error: give zeros so lowering
	// continues quietly.
	return kb.zeroVal(v.Type())
}

func (kb *kernelBuilder) zeroVal(t types.Type) *val {
	fl, _ := flatten(t)
	v := &val{origin: -1}
	for _, s := range fl {
		v.ops = append(v.ops, ir.Imm(s.RegType(), 0))
	}
	return v
}

// phiVal returns the registers of a phi, allocating them on first use.
func (kb *kernelBuilder) phiVal(fr *frame, p *ssa.Phi) *val {
	if v, ok := fr.vals[p]; ok {
		return v
	}
	fl, ok := flatten(p.Type())
	if !ok {
		kb.d.errorf(posOfValue(p), UnsupportedType, "values of type %s are not supported in kernels", typeName(p.Type()))
	}
	info := fr.spaces[p]
	v := &val{space: info.space, origin: info.origin, mask: info.mask}
	for _, t := range fl {
		v.ops = append(v.ops, ir.R(kb.b.New(t)))
	}
	fr.vals[p] = v
	return v
}

// edge moves the values the successor's phis take from block from, then
// jumps to the successor.
func (kb *kernelBuilder) edge(fr *frame, from, to *ssa.BasicBlock) {
	if l := fr.partialBackEdge(from, to); l != nil {
		kb.phiMoves(fr, from, to)
		kb.b.Bra(l.backTo)
		return
	}
	if l := fr.backEdge(from, to); l != nil {
		// The next iteration of an unrolled loop.
		kb.phiMoves(fr, from, to)
		if l.next == nil {
			l.next = kb.f.NewBlock(blockHint(fr.fn, to))
		}
		kb.b.Bra(l.next)
		return
	}
	if pl := fr.hoists[to]; pl != nil {
		if from == pl.entry {
			kb.emitHoistEntry(fr, pl)
		} else {
			kb.emitHoistStep(fr, pl)
		}
	}
	kb.phiMoves(fr, from, to)
	fr.reach(to)
	if il := fr.ivLoops[to]; il != nil {
		kb.ivEdge(fr, il, from, func() { kb.b.Bra(fr.blocks[to.Index]) })
		return
	}
	kb.b.Bra(fr.blocks[to.Index])
}

func (kb *kernelBuilder) phiMoves(fr *frame, from, to *ssa.BasicBlock) {
	pi := -1
	for i, p := range to.Preds {
		if p == from {
			pi = i
		}
	}
	type move struct {
		dst ir.Reg
		src ir.Operand
		t   ir.Type
	}
	var moves []move
	dsts := map[ir.Reg]bool{}
	for _, instr := range to.Instrs {
		p, ok := instr.(*ssa.Phi)
		if !ok {
			break
		}
		if l := fr.backEdge(from, to); l != nil && l.ind == p {
			l.nextInd = kb.value(fr, p.Edges[pi])
			continue
		}
		if l := fr.unrolled[to]; l != nil && l.ind == p {
			continue // entering the loop: lowerUnrolled binds the counter
		}
		dst := kb.phiVal(fr, p)
		src := kb.value(fr, p.Edges[pi])
		src = kb.toSpace(src, dst.space)
		for i, o := range dst.ops {
			if i < len(src.ops) {
				moves = append(moves, move{o.Reg, src.ops[i], kb.f.Regs[o.Reg]})
				dsts[o.Reg] = true
			}
		}
	}
	// Phis are parallel assignments: if a source is another phi's
	// destination, copy through temporaries.
	parallel := false
	for _, m := range moves {
		if m.src.Kind == ir.KReg && dsts[m.src.Reg] && m.src.Reg != m.dst {
			parallel = true
		}
	}
	if parallel {
		for i, m := range moves {
			t := kb.b.New(m.t)
			kb.b.Mov(m.t, t, m.src)
			moves[i].src = ir.R(t)
		}
	}
	for _, m := range moves {
		if m.src.Kind == ir.KReg && m.src.Reg == m.dst {
			continue
		}
		kb.b.Mov(m.t, m.dst, m.src)
	}
}

func hasPhis(b *ssa.BasicBlock) bool {
	if len(b.Instrs) == 0 {
		return false
	}
	_, ok := b.Instrs[0].(*ssa.Phi)
	return ok
}

func (kb *kernelBuilder) lowerIf(fr *frame, in *ssa.If) {
	b := in.Block()
	tb, fb := b.Succs[0], b.Succs[1]
	delete(fr.merged, tb) // lowered on its own unless merged again below (condmerge.go)
	if l := fr.partialAt(b); l != nil && l.skipTest {
		kb.edge(fr, b, tb) // a copy of a partially unrolled loop: the guard tested
		return
	}
	if c := kb.value(fr, in.Cond).ops[0]; c.Kind == ir.KImm {
		// A condition folded to a constant (an unrolled loop's test).
		if c.Imm&1 != 0 {
			kb.edge(fr, b, tb)
		} else {
			kb.edge(fr, b, fb)
		}
		return
	}
	if pl := fr.hoists[b]; pl != nil {
		kb.emitHoistIf(fr, pl)
		return
	}
	cond := kb.predReg(kb.value(fr, in.Cond))
	if chain := kb.andChain(fr, b); len(chain) > 0 {
		kb.lowerAndChain(fr, b, cond, chain)
		return
	}
	target := func(s *ssa.BasicBlock) *ir.Block {
		if !hasPhis(s) && fr.backEdge(b, s) == nil {
			fr.reach(s)
			return fr.blocks[s.Index]
		}
		// Moves for the successor's phis go on their own edge block.
		e := kb.f.NewBlock("edge")
		saved := kb.b.B
		kb.b.B = e
		kb.edge(fr, b, s)
		kb.b.B = saved
		return e
	}
	t, f := target(tb), target(fb)
	kb.b.BraIf(cond, false, t)
	kb.b.Bra(f)
}

func (kb *kernelBuilder) lowerReturn(fr *frame, in *ssa.Return) {
	if fr.ret == nil {
		kb.b.Ret()
		return
	}
	i := 0
	if len(in.Results) == 1 {
		if _, ok := in.Results[0].Type().Underlying().(*types.Struct); ok {
			v := kb.value(fr, in.Results[0])
			switch {
			case v.slots == nil:
				fr.retUnknown = true
			case fr.retSlots == nil:
				fr.retSlots = v.slots
			default:
				fr.retSlots = joinSlots(fr.retSlots, v.slots)
			}
		}
	}
	for _, r := range in.Results {
		v := kb.value(fr, r)
		for _, o := range v.ops {
			kb.b.Mov(fr.resT[i], fr.result[i], o)
			kb.joinReturn(fr, i, o)
			i++
		}
	}
	kb.b.Bra(fr.ret)
}

// predReg returns a predicate register holding a bool value.
func (kb *kernelBuilder) predReg(v *val) ir.Reg {
	o := v.ops[0]
	if o.Kind == ir.KReg {
		return o.Reg
	}
	p := kb.b.New(ir.Pred)
	// A constant condition: compare 1 or 0 with 1.
	kb.b.Setp(ir.EQ, ir.U32, p, ir.Imm(ir.U32, o.Imm&1), ir.Imm(ir.U32, 1))
	return p
}

// reg returns o in a register of type t, materialising immediates.
func (kb *kernelBuilder) reg(o ir.Operand, t ir.Type) ir.Reg {
	if o.Kind == ir.KReg {
		return o.Reg
	}
	if t == ir.Pred {
		return kb.predReg(&val{ops: []ir.Operand{o}})
	}
	r := kb.b.New(t)
	kb.b.Mov(t, r, o)
	return r
}

func (kb *kernelBuilder) reject(fr *frame, instr ssa.Instruction) {
	pos := instr.Pos()
	if v, ok := instr.(ssa.Value); ok && !pos.IsValid() && v.Referrers() != nil {
		// An implicit conversion (to an interface, say) has no position:
		// use its first use's.
		for _, r := range *v.Referrers() {
			if pos = r.Pos(); pos.IsValid() {
				break
			}
		}
	}
	if !pos.IsValid() {
		pos = fr.fn.Pos()
	}
	code, msg := UnsupportedConstruct, "this construct is not supported in kernels"
	switch instr.(type) {
	case *ssa.MakeClosure:
		code, msg = UnsupportedClosure, "func literals are not supported in kernels: write a named helper func in the same package"
	case *ssa.MakeInterface, *ssa.TypeAssert, *ssa.ChangeInterface:
		code, msg = UnsupportedInterface, "interface values are not supported in kernels: use a concrete type or a type parameter"
	case *ssa.MakeMap, *ssa.MapUpdate, *ssa.Lookup:
		code, msg = UnsupportedMap, "maps are not supported in kernels: use a slice indexed by a small integer key"
	case *ssa.Go:
		code, msg = UnsupportedGoroutine, "go statements are not supported in kernels: every GPU thread already runs the kernel; launch more threads instead"
	case *ssa.MakeChan, *ssa.Send, *ssa.Select:
		code, msg = UnsupportedChannel, "channels are not supported in kernels: threads communicate through shared memory and t.Sync() or warp shuffles"
	case *ssa.Defer, *ssa.RunDefers:
		code, msg = UnsupportedDefer, "defer is not supported in kernels: call the cleanup explicitly before returning"
	case *ssa.MakeSlice:
		code, msg = HeapAllocation, "make allocates on the heap, which kernels cannot: use gpu.Shared, a local array, or a buffer parameter"
	case *ssa.Range, *ssa.Next:
		msg = "range over strings or maps is not supported in kernels: range over an int or a slice"
	}
	kb.d.errorf(pos, code, "%s", msg)
	if v, ok := instr.(ssa.Value); ok {
		fr.vals[v] = kb.zeroVal(v.Type())
	}
}

// onlyPanics reports whether v is used only as a panic's argument (a
// panic message boxed into an interface), which lowering ignores.
func onlyPanics(v ssa.Value) bool {
	refs := v.Referrers()
	if refs == nil {
		return false
	}
	for _, r := range *refs {
		if _, ok := r.(*ssa.Panic); !ok {
			return false
		}
	}
	return true
}
