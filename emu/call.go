package emu

// Real calls: a call stack for recursion and calls through function
// pointers (PTX ISA §9.7.12.5 call, §9.7.12.6 ret).
//
// Most calls are expanded inline (inline.go). A call to a function that is
// already being expanded (recursion), or through a register (an indirect
// call), instead runs an out-of-line copy of the function, decoded once
// per kernel after the entry's body: a callee. A callee owns a range of
// register slots and of per-thread local memory (its parameters, its
// .local variables, and everything it expands inline). A call saves the
// lane's values of that range in a frame on the lane's own stack, writes
// the arguments and jumps; ret reads the results, restores the range and
// returns to the instruction after the call. Saving the callee's own range
// is enough: a caller's registers are either the callee's (recursion,
// saved here) or outside its range (untouched).
//
// Each lane has its own stack, so lanes of one warp may be at different
// depths; lanes at the same PC still run together. The one thing this
// does not model is a pointer to a recursive function's .local variable
// passed to a deeper activation of the same function: both activations
// use the same local addresses.

import (
	"encoding/binary"
	"math/bits"
)

// maxCallDepth bounds each lane's call stack; deeper recursion is a fault
// (a GPU's stack is a per-thread allocation that overflows too).
const maxCallDepth = 4096

// funcBase is where function addresses (mov.u64 %rd, f) start: callee i
// is at funcBase + 16i, below every allocation so that a load through one
// faults.
const funcBase = 0x7e00_0000_0000

// callee is an out-of-line function body.
type callee struct {
	name         string
	f            *astFunc
	pc           int32
	params, rets []binding
	regLo, regHi int32 // register slots saved across a call
	locLo, locHi int   // local bytes saved across a call
}

// binding is where a callee keeps one parameter or result: a register
// slot (r, slot*32) or size bytes of local memory at off.
type binding struct {
	reg  bool
	r    int32
	off  int
	size int
	typ  dtype
}

// callSite is one call instruction's operands (inst.aux indexes
// kernel.sites).
type callSite struct {
	callee int // index in kernel.funcs, or -1 for a call through fptr
	fptr   opnd
	args   []siteArg
	rets   []siteArg
}

// siteArg is an argument or result at a call site: a register or
// immediate, or a .param variable of the caller (local bytes at off).
type siteArg struct {
	o     opnd
	local bool
	off   int
	size  int
}

// frame is one activation on a lane's stack.
type frame struct {
	ret    int32
	site   int32
	callee int32
	regs   []uint64
	local  []byte
}

// outline returns the index of name's out-of-line copy in this kernel,
// queueing it for decoding the first time.
func (d *decoder) outline(name string) int {
	if i, ok := d.k.outlined[name]; ok {
		return i
	}
	i := len(d.k.funcs)
	d.k.funcs = append(d.k.funcs, &callee{name: name, f: d.funcs[name]})
	d.k.outlined[name] = i
	return i
}

// realCall decodes a call that runs on the call stack: to name (direct),
// or through the register operand fptr.
func (d *decoder) realCall(s *astStmt, rets, args []astArg, name string, fptr *astArg) {
	site := callSite{callee: -1}
	var f *astFunc
	if fptr == nil {
		site.callee = d.outline(name)
		f = d.funcs[name]
		if len(rets) != len(f.rets) || len(args) != len(f.params) {
			d.errorf("call %s: %d results and %d arguments, the function has %d and %d", name, len(rets), len(args), len(f.rets), len(f.params))
			return
		}
	} else {
		site.fptr = d.src(*fptr, tU64)
	}
	arg := func(a astArg, i int, ps []astParam, out bool) siteArg {
		t := tNone
		if f != nil {
			t = ps[i].typ
		}
		return d.siteArg(a, t, out)
	}
	for i, a := range args {
		var ps []astParam
		if f != nil {
			ps = f.params
		}
		site.args = append(site.args, arg(a, i, ps, false))
	}
	for i, a := range rets {
		var ps []astParam
		if f != nil {
			ps = f.rets
		}
		site.rets = append(site.rets, arg(a, i, ps, true))
	}
	in := inst{guard: -1, ctl: ctlCall, line: int32(s.line), loc: s.loc, text: s.op, target: -1, aux: uint32(len(d.k.sites))}
	if s.guard != "" {
		r, ok := d.reg(s.guard)
		if !ok {
			d.errorf("unknown guard predicate %s", s.guard)
		}
		in.guard, in.gneg = r.slot*32, s.guardNeg
	}
	d.k.sites = append(d.k.sites, site)
	d.emit(in)
}

// siteArg resolves a call's argument or result: a .param variable of the
// caller, or a register (or, for arguments, an immediate) of type t, or
// of the register's own type when t is tNone.
func (d *decoder) siteArg(a astArg, t dtype, out bool) siteArg {
	if a.kind == aName {
		if sym, ok := d.syms[a.name]; ok && sym.space == spLocal {
			return siteArg{local: true, off: sym.off, size: d.symSize(a.name)}
		}
	}
	if t == tNone {
		t = tB64
		if r, ok := d.reg(a.name); ok && a.kind == aName {
			t = r.typ
		}
	}
	if out {
		return siteArg{o: d.dst(a), size: t.size()}
	}
	return siteArg{o: d.src(a, t), size: t.size()}
}

// symSize is the size of a local variable declared in the body being
// decoded (a call's .param argument buffer).
func (d *decoder) symSize(name string) int {
	for _, v := range d.f.vars {
		if v.name == name {
			return v.size()
		}
	}
	return 0
}

// emitOutlined decodes the callees queued while decoding the entry (and
// those they queue in turn), after its body.
func (d *decoder) emitOutlined() {
	for i := 0; i < len(d.k.funcs); i++ {
		d.emitCallee(d.k.funcs[i])
	}
}

func (d *decoder) emitCallee(c *callee) {
	f := c.f
	k := d.k
	cd := &decoder{m: d.m, f: f, k: k, regs: map[string]regInfo{}, syms: map[string]symbol{},
		labels: map[string]int32{}, funcs: d.funcs, stack: []string{f.name}, outlined: true, modSyms: d.modSyms}
	for n, sym := range d.modSyms {
		cd.syms[n] = sym
	}
	cd.errs = append(cd.errs, f.errs...)
	c.regLo, c.locLo = int32(k.nregs), k.localBytes
	bind := func(p astParam) binding {
		if p.space == "reg" {
			slot := int32(k.nregs)
			k.nregs++
			cd.regs[p.name] = regInfo{slot: slot, typ: p.typ}
			return binding{reg: true, r: slot * 32, size: p.typ.size(), typ: p.typ}
		}
		a := p.align
		if a == 0 {
			a = p.typ.size()
		}
		size := p.typ.size() * p.count
		off := alignUp(k.localBytes, a)
		k.localBytes = off + size
		cd.syms[p.name] = symbol{space: spLocal, off: off, typ: p.typ}
		return binding{off: off, size: size, typ: p.typ}
	}
	for _, p := range f.params {
		c.params = append(c.params, bind(p))
	}
	for _, p := range f.rets {
		c.rets = append(c.rets, bind(p))
	}
	for _, r := range f.regs {
		cd.line = r.line
		cd.declareReg(r)
	}
	for _, v := range f.vars {
		cd.line = v.line
		switch v.space {
		case "local":
			off := alignUp(k.localBytes, v.alignment())
			cd.syms[v.name] = symbol{space: spLocal, off: off, typ: v.typ}
			k.localBytes = off + v.size()
		default:
			cd.errorf("%s: .%s variables in a .func are not supported", v.name, v.space)
		}
	}
	c.pc = int32(len(k.code))
	cd.line = f.line
	cd.emitBody(f.stmts)
	// Falling off the end of a function returns.
	cd.emit(inst{ctl: ctlRet, guard: -1, line: int32(cd.line), text: "ret", target: -1})
	c.regHi, c.locHi = int32(k.nregs), k.localBytes
	d.errs = append(d.errs, cd.errs...)
}

// call pushes a frame for lane l and moves it to the callee.
func (w *warp) call(in *inst, pc int32, l int) error {
	k := w.k
	site := &k.sites[in.aux]
	ci := site.callee
	if ci < 0 {
		v := w.get(&site.fptr, l)
		i := int((v - funcBase) / 16)
		if v < funcBase || (v-funcBase)%16 != 0 || i >= len(k.funcs) {
			return faultf(l, ErrTrap, "indirect call to %#x, which is not the address of a function", v)
		}
		ci = i
	}
	c := k.funcs[ci]
	if len(site.args) != len(c.params) || len(site.rets) != len(c.rets) {
		return faultf(l, ErrTrap, "call of %s with %d arguments and %d results; it takes %d and returns %d",
			c.name, len(site.args), len(site.rets), len(c.params), len(c.rets))
	}
	if len(w.frames[l]) >= maxCallDepth {
		return faultf(l, ErrTrap, "call stack overflow calling %s: %d frames", c.name, maxCallDepth)
	}
	lmem := w.laneLocal(l)
	// Read every argument before writing any: a recursive call passes the
	// callee's own registers.
	vals := make([][]byte, len(site.args))
	for i, a := range site.args {
		vals[i] = w.siteValue(a, lmem, l, c.params[i].size)
	}
	fr := frame{ret: pc + 1, site: int32(in.aux), callee: int32(ci),
		regs: make([]uint64, c.regHi-c.regLo), local: append([]byte(nil), lmem[c.locLo:c.locHi]...)}
	for s := c.regLo; s < c.regHi; s++ {
		fr.regs[s-c.regLo] = w.regs[int(s)*32+l]
	}
	w.frames[l] = append(w.frames[l], fr)
	for i, b := range c.params {
		w.bindSet(b, lmem, l, vals[i])
	}
	w.pc[l] = c.pc
	return nil
}

// ret pops lane l's frame: results out, the callee's registers and local
// memory restored, and the lane back after its call.
func (w *warp) ret(in *inst, l int) error {
	n := len(w.frames[l])
	if n == 0 {
		return faultf(l, ErrTrap, "ret with an empty call stack")
	}
	fr := w.frames[l][n-1]
	w.frames[l] = w.frames[l][:n-1]
	k := w.k
	c, site := k.funcs[fr.callee], &k.sites[fr.site]
	lmem := w.laneLocal(l)
	vals := make([][]byte, len(c.rets))
	for i, b := range c.rets {
		if b.reg {
			vals[i] = binary.LittleEndian.AppendUint64(nil, w.regs[int(b.r)+l])[:b.size]
		} else {
			vals[i] = append([]byte(nil), lmem[b.off:b.off+b.size]...)
		}
	}
	for s := c.regLo; s < c.regHi; s++ {
		w.regs[int(s)*32+l] = fr.regs[s-c.regLo]
	}
	copy(lmem[c.locLo:c.locHi], fr.local)
	for i, a := range site.rets {
		if a.local {
			copy(lmem[a.off:a.off+min(a.size, len(vals[i]))], vals[i])
			continue
		}
		w.regs[int(a.o.r)+l] = leUint(vals[i]) & maskBytes(a.size)
	}
	w.pc[l] = fr.ret
	return nil
}

// siteValue reads a call argument as size bytes.
func (w *warp) siteValue(a siteArg, lmem []byte, l, size int) []byte {
	out := make([]byte, size)
	if a.local {
		copy(out, lmem[a.off:a.off+min(a.size, size)])
		return out
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], w.get(&a.o, l))
	copy(out, b[:min(size, 8, a.size)])
	return out
}

// bindSet writes an argument into a callee's parameter.
func (w *warp) bindSet(b binding, lmem []byte, l int, v []byte) {
	if b.reg {
		x := leUint(v)
		if b.typ == tPred {
			x &= 1
		}
		w.regs[int(b.r)+l] = x
		return
	}
	copy(lmem[b.off:b.off+b.size], v)
}

// laneLocal is lane l's local memory.
func (w *warp) laneLocal(l int) []byte {
	size := w.k.localSize
	return w.local[l*size : (l+1)*size : (l+1)*size]
}

func leUint(v []byte) uint64 {
	var b [8]byte
	copy(b[:], v)
	return binary.LittleEndian.Uint64(b[:])
}

func maskBytes(n int) uint64 {
	if n >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*n) - 1
}

// callControl runs ctlCall and ctlRet for the lanes in exec; the others
// of mask go on to the next instruction.
func (w *warp) callControl(in *inst, pc int32, mask, exec uint32) error {
	w.materialize()
	w.setPC(mask&^exec, pc+1)
	for mm := exec; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		var err error
		if in.ctl == ctlCall {
			err = w.call(in, pc, l)
		} else {
			err = w.ret(in, l)
		}
		if err != nil {
			return w.fault(in, err)
		}
	}
	return nil
}
