package emu

// Decoding an entry: registers, symbols, labels, then each statement once.

import (
	"fmt"
	"strconv"
	"strings"
)

// kernel is a decoded .entry.
type kernel struct {
	mod   *Module
	info  EntryInfo
	code  []inst
	flow  []flow // per instruction, for timing observers (flow.go)
	nregs int    // register slots, special registers included
	// Parameter buffer size (the packed LaunchConfig.Params length).
	paramSize int
	// Module globals the code refers to, by index (all of them).
	sharedStatic int
	dynAlign     int
	localBytes   int // per-thread local variables, inlined functions' included
	localSize    int // localBytes rounded up: the per-thread stride
	files        map[int]string
	// Out-of-line functions and call sites of calls on the call stack
	// (call.go); outlined maps a function's name to its index in funcs
	// while decoding.
	funcs    []*callee
	sites    []callSite
	outlined map[string]int
	// reserved: the kernel reads %reserved_smem_offset_*; launches add
	// reservedSmem bytes of shared memory for it.
	reserved bool
}

// Special registers occupy the first register slots; the warp fills them
// when a block starts (PTX ISA §10).
const (
	srTidX = iota
	srTidY
	srTidZ
	srNtidX
	srNtidY
	srNtidZ
	srCtaidX
	srCtaidY
	srCtaidZ
	srNctaidX
	srNctaidY
	srNctaidZ
	srLaneid
	srWarpid
	srNwarpid
	srLanemaskEq
	srLanemaskLt
	srLanemaskLe
	srLanemaskGt
	srLanemaskGe
	srSmid
	srNsmid
	srGridid
	srDynSmem
	srTotalSmem
	// %reserved_smem_offset_begin/_end/_cap/_0/_1: a block's reserved
	// shared memory, which cooperative groups use as scratch (nvcc -G).
	srResBegin
	srResEnd
	srResCap
	srRes0
	srRes1
	srSink  // the _ operand writes here
	srCarry // CC.CF of add.cc/addc/... (exec_carry.go), per lane
	numSregs
)

var sregNames = map[string]int{
	"%tid.x": srTidX, "%tid.y": srTidY, "%tid.z": srTidZ,
	"%ntid.x": srNtidX, "%ntid.y": srNtidY, "%ntid.z": srNtidZ,
	"%ctaid.x": srCtaidX, "%ctaid.y": srCtaidY, "%ctaid.z": srCtaidZ,
	"%nctaid.x": srNctaidX, "%nctaid.y": srNctaidY, "%nctaid.z": srNctaidZ,
	"%laneid": srLaneid, "%warpid": srWarpid, "%nwarpid": srNwarpid,
	"%lanemask_eq": srLanemaskEq, "%lanemask_lt": srLanemaskLt, "%lanemask_le": srLanemaskLe,
	"%lanemask_gt": srLanemaskGt, "%lanemask_ge": srLanemaskGe,
	"%smid": srSmid, "%nsmid": srNsmid, "%gridid": srGridid,
	"%dynamic_smem_size": srDynSmem, "%total_smem_size": srTotalSmem,
	"%reserved_smem_offset_begin": srResBegin, "%reserved_smem_offset_end": srResEnd,
	"%reserved_smem_offset_cap": srResCap, "%reserved_smem_offset_0": srRes0,
	"%reserved_smem_offset_1": srRes1,
}

// reservedSmem is the reserved shared memory emu gives a block whose
// kernel reads a %reserved_smem_offset register: after the kernel's own
// shared memory, 16-byte aligned, in two halves for _0 and _1.
const reservedSmem = 1024

// regInfo is a declared register.
type regInfo struct {
	slot int32
	typ  dtype
}

// symbol is a variable or parameter name visible in the entry.
type symbol struct {
	space space
	off   int // byte offset in its space (param, shared, local)
	gidx  int // module global index for spGlobal/spConst
	typ   dtype
}

// decoder holds per-entry state while decoding.
type decoder struct {
	m      *Module
	f      *astFunc
	k      *kernel
	regs   map[string]regInfo
	syms   map[string]symbol
	labels map[string]int32
	errs   ErrorList
	line   int

	funcs  map[string]*astFunc // .func bodies, for inlining calls
	stack  []string            // functions being inlined, outermost first
	fixups []fixup             // branches to resolve when the body is done
	inFunc bool                // decoding an inlined .func: ret returns
	// outlined: decoding an out-of-line function body (call.go), whose
	// ret pops the call stack.
	outlined bool
	modSyms  map[string]symbol // module-scope symbols, shared by inlined bodies
	// symSpace is the state space of the symbol the last addr() resolved,
	// or spGeneric for a register or absolute address.
	symSpace space
}

// fixup is a branch whose target label is resolved after the body.
type fixup struct {
	pc    int32
	label string
	line  int
}

// retLabel names the return point of an inlined function; no PTX label
// can contain a space.
const retLabel = "return point"

func (d *decoder) errorf(format string, args ...any) {
	d.errs = append(d.errs, &SyntaxError{d.line, fmt.Sprintf(format, args...)})
}

func alignUp(n, a int) int {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

func decodeKernel(m *Module, ast *astModule, f *astFunc, funcs map[string]*astFunc) (*kernel, ErrorList) {
	k := &kernel{mod: m, files: ast.files, dynAlign: 16, outlined: map[string]int{}}
	k.info.Name = f.name
	k.info.MaxNTid = f.maxntid
	k.info.ReqNTid = f.reqntid
	d := &decoder{m: m, f: f, k: k, regs: map[string]regInfo{},
		syms: map[string]symbol{}, labels: map[string]int32{}, funcs: funcs, stack: []string{f.name},
		modSyms: map[string]symbol{}}
	d.line = f.line

	// Parameters, packed at natural alignment (PTX ISA §5.1.6.1).
	off := 0
	for _, p := range f.params {
		d.line = p.line
		if p.space != "param" {
			d.errorf("entry parameter %s must be in .param space", p.name)
			continue
		}
		a := p.align
		if a == 0 {
			a = p.typ.size()
		}
		off = alignUp(off, a)
		size := p.typ.size() * p.count
		k.info.Params = append(k.info.Params, Param{Name: p.name, Type: p.typ.String(), Size: size, Align: a, Offset: off})
		d.syms[p.name] = symbol{space: spParam, off: off, typ: p.typ}
		off += size
	}
	k.paramSize = off

	// Registers.
	k.nregs = numSregs
	for _, r := range f.regs {
		d.line = r.line
		d.declareReg(r)
	}

	// Module globals, then shared variables: module-scope first, then the
	// entry's own; dynamic (extern, unsized) shared arrays all start after
	// the static ones.
	for i, g := range m.globals {
		d.syms[g.name] = symbol{space: spGlobal, gidx: i}
		d.modSyms[g.name] = d.syms[g.name]
	}
	var dynNames []string
	shared, local := 0, 0
	place := func(v *astVar) {
		d.line = v.line
		switch v.space {
		case "shared":
			if v.count < 0 || v.extern {
				dynNames = append(dynNames, v.name)
				if a := v.alignment(); a > k.dynAlign {
					k.dynAlign = a
				}
				return
			}
			shared = alignUp(shared, v.alignment())
			d.syms[v.name] = symbol{space: spShared, off: shared, typ: v.typ}
			shared += v.size()
		case "local":
			if v.count < 0 {
				d.errorf("%s: unsized .local array", v.name)
				return
			}
			local = alignUp(local, v.alignment())
			d.syms[v.name] = symbol{space: spLocal, off: local, typ: v.typ}
			local += v.size()
		case "global", "const":
			d.errorf("%s: .%s variables inside a function are not supported", v.name, v.space)
		}
	}
	for _, v := range ast.vars {
		if v.space == "shared" {
			place(v)
			if sym, ok := d.syms[v.name]; ok {
				d.modSyms[v.name] = sym
			}
		}
	}
	for _, v := range f.vars {
		place(v)
	}
	k.sharedStatic = shared
	dyn := alignUp(shared, k.dynAlign)
	for _, n := range dynNames {
		d.syms[n] = symbol{space: spShared, off: dyn}
		d.modSyms[n] = d.syms[n]
	}
	k.info.StaticShared = shared
	k.info.DynamicOffset = dyn
	k.localBytes = local

	d.emitBody(f.stmts)
	// A trailing exit makes falling off the end of the body well defined.
	k.code = append(k.code, inst{ctl: ctlExit, guard: -1, line: int32(d.line), text: "exit", pc: int32(len(k.code))})
	d.emitOutlined()
	k.flow = buildFlow(k.code)
	k.outlined = nil
	k.localSize = alignUp(k.localBytes, 16)
	k.info.LocalBytes = k.localBytes
	return k, d.errs
}

// emitBody decodes statements into k.code, then resolves the branches to
// its labels. Calls expand in place (inline.go).
func (d *decoder) emitBody(stmts []astStmt) {
	for i := range stmts {
		s := &stmts[i]
		d.line = s.line
		if s.label != "" {
			if _, dup := d.labels[s.label]; dup {
				d.errorf("label %s defined twice", s.label)
			}
			d.labels[s.label] = int32(len(d.k.code))
			continue
		}
		if strings.HasPrefix(s.op, "call") && (len(s.op) == 4 || s.op[4] == '.') {
			d.inlineCall(s)
			continue
		}
		d.emit(d.decodeStmt(s))
	}
	if d.inFunc {
		d.labels[retLabel] = int32(len(d.k.code))
	}
	for _, f := range d.fixups {
		t, ok := d.labels[f.label]
		if !ok {
			d.line = f.line
			d.errorf("bra: unknown label %s", f.label)
			continue
		}
		d.k.code[f.pc].target = t
	}
	d.fixups = nil
}

// emit appends an instruction and returns its PC.
func (d *decoder) emit(in inst) int32 {
	in.pc = int32(len(d.k.code))
	d.k.code = append(d.k.code, in)
	return in.pc
}

func (d *decoder) declareReg(r astReg) {
	add := func(name string) {
		if _, dup := d.regs[name]; dup {
			d.errorf("register %s declared twice", name)
			return
		}
		d.regs[name] = regInfo{slot: int32(d.k.nregs), typ: r.typ}
		d.k.nregs++
	}
	if r.n < 0 {
		add(r.name)
		return
	}
	for i := 0; i < r.n; i++ {
		add(r.name + strconv.Itoa(i))
	}
}

// reg resolves a register name.
func (d *decoder) reg(name string) (regInfo, bool) {
	if r, ok := d.regs[name]; ok {
		return r, true
	}
	if i, ok := sregNames[name]; ok {
		if i >= srResBegin && i <= srRes1 {
			d.k.reserved = true
		}
		return regInfo{slot: int32(i), typ: tU32}, true
	}
	if name == "_" {
		return regInfo{slot: srSink, typ: tB64}, true
	}
	return regInfo{}, false
}

// dst resolves a destination register operand.
func (d *decoder) dst(a astArg) opnd {
	a = unwrap1(a)
	if a.kind != aName {
		d.errorf("destination must be a register, found %s", argString(a))
		return opnd{kind: oReg, r: srSink * 32, r2: -1}
	}
	r, ok := d.reg(a.name)
	if !ok || (r.slot < numSregs && r.slot != srSink) {
		d.errorf("unknown register %s", a.name)
		return opnd{kind: oReg, r: srSink * 32, r2: -1}
	}
	return opnd{kind: oReg, r: r.slot * 32, r2: -1}
}

// unwrap1 turns a one-element vector {r} into r: Triton writes scalar
// ld and st operands that way.
func unwrap1(a astArg) astArg {
	if a.kind == aVec && len(a.elems) == 1 {
		return a.elems[0]
	}
	return a
}

// dstPair resolves d or d|p.
func (d *decoder) dstPair(a astArg) opnd {
	if a.kind == aPair {
		o := d.dst(a.elems[0])
		o.r2 = d.dst(a.elems[1]).r
		return o
	}
	return d.dst(a)
}

// src resolves a source operand of type t: a register, a special
// register, an immediate (converted to t's bit pattern) or a symbol's
// address.
func (d *decoder) src(a astArg, t dtype) opnd {
	a = unwrap1(a)
	switch a.kind {
	case aImm, aF32, aF64:
		return opnd{kind: oImm, imm: constBits(a, t), r2: -1}
	case aName:
		if a.name == "%clock" || a.name == "%clock64" || a.name == "%globaltimer" {
			return opnd{kind: oClock, r2: -1}
		}
		if r, ok := d.reg(a.name); ok {
			return opnd{kind: oReg, r: r.slot * 32, neg: a.neg, r2: -1}
		}
		if s, ok := d.syms[a.name]; ok {
			return d.symAddr(s, 0, false)
		}
		if _, ok := d.funcs[a.name]; ok {
			// A function's address, for an indirect call (call.go).
			return opnd{kind: oImm, imm: funcBase + 16*uint64(d.outline(a.name)), r2: -1}
		}
		d.errorf("unknown operand %s", a.name)
	default:
		d.errorf("unexpected operand %s", argString(a))
	}
	return opnd{kind: oImm, r2: -1}
}

// symAddr is the address of a symbol plus off: its address in its own
// state space, or with generic its generic address (PTX ISA §6.4.1).
func (d *decoder) symAddr(s symbol, off uint64, generic bool) opnd {
	switch s.space {
	case spGlobal, spConst:
		return opnd{kind: oGsym, sym: int32(s.gidx), imm: off, r2: -1}
	case spShared:
		a := uint64(s.off) + off
		if generic {
			a += sharedWindow
		}
		return opnd{kind: oImm, imm: a, r2: -1}
	case spLocal:
		a := uint64(s.off) + off
		if generic {
			a += localWindow
		}
		return opnd{kind: oImm, imm: a, r2: -1}
	}
	return opnd{kind: oImm, imm: uint64(s.off) + off, r2: -1}
}

// addr resolves a [base+off] operand for an access in state space sp.
func (d *decoder) addr(a astArg, sp space) opnd {
	if a.kind != aAddr {
		d.errorf("expected an address [..], found %s", argString(a))
		return opnd{kind: oImm, r2: -1}
	}
	d.symSpace = spGeneric
	if a.name == "" {
		return opnd{kind: oImm, imm: a.imm, r2: -1}
	}
	if r, ok := d.reg(a.name); ok {
		return opnd{kind: oReg, r: r.slot * 32, imm: a.imm, r2: -1}
	}
	s, ok := d.syms[a.name]
	if !ok {
		d.errorf("unknown symbol %s in address", a.name)
		return opnd{kind: oImm, r2: -1}
	}
	d.symSpace = s.space
	// A .param variable declared in a body (a call's argument buffer) and
	// an inlined function's .param parameters live in local memory; their
	// ld.param/st.param become local accesses (see paramSpace).
	paramInLocal := sp == spParam && s.space == spLocal
	if sp != spGeneric && s.space != sp && !paramInLocal && !(sp == spConst && s.space == spGlobal) && !(sp == spGlobal && s.space == spConst) {
		d.errorf("%s is in .%s, not .%s", a.name, s.space, sp)
	}
	return d.symAddr(s, a.imm, sp == spGeneric)
}

// vecRegs resolves {r0, r1, ...} to register slots; immediates are
// allowed as sources when imm is true.
func (d *decoder) vecRegs(a astArg, n int, t dtype, imm bool) opnd {
	if a.kind != aVec {
		if n == 1 {
			o := d.src(a, t)
			if o.kind == oReg {
				return opnd{kind: oReg, vec: []int32{o.r}, r2: -1}
			}
		}
		d.errorf("expected a vector of %d registers, found %s", n, argString(a))
		return opnd{vec: make([]int32, n), r2: -1}
	}
	if len(a.elems) != n {
		d.errorf("expected %d registers in {..}, found %d", n, len(a.elems))
	}
	o := opnd{kind: oReg, vec: make([]int32, n), r2: -1}
	for i := 0; i < n && i < len(a.elems); i++ {
		e := a.elems[i]
		if e.kind != aName {
			if imm {
				if o.vimm == nil {
					o.vimm = make([]uint64, n)
				}
				o.vimm[i] = constBits(e, t)
				o.vec[i] = -1
				continue
			}
			d.errorf("expected a register in {..}, found %s", argString(e))
			continue
		}
		r, ok := d.reg(e.name)
		if !ok {
			d.errorf("unknown register %s", e.name)
			o.vec[i] = srSink * 32
			continue
		}
		o.vec[i] = r.slot * 32
	}
	return o
}

func argString(a astArg) string {
	switch a.kind {
	case aName:
		if a.neg {
			return "!" + a.name
		}
		return a.name
	case aImm:
		return strconv.FormatInt(int64(a.imm), 10)
	case aF32:
		return fmt.Sprintf("0f%08X", a.imm)
	case aF64:
		return fmt.Sprintf("0d%016X", a.imm)
	case aAddr:
		if a.name == "" {
			return fmt.Sprintf("[%d]", a.imm)
		}
		if a.imm != 0 {
			return fmt.Sprintf("[%s+%d]", a.name, int64(a.imm))
		}
		return "[" + a.name + "]"
	case aPair:
		return argString(a.elems[0]) + "|" + argString(a.elems[1])
	case aVec, aList:
		parts := make([]string, len(a.elems))
		for i, e := range a.elems {
			parts[i] = argString(e)
		}
		if a.kind == aVec {
			return "{" + strings.Join(parts, ", ") + "}"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return "?"
}
