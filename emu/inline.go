package emu

// Calls to .func are expanded inline when the entry is decoded: the
// callee's body is decoded again at each call site with fresh registers,
// labels and local variables, its .reg parameters are copied in and out
// with moves, its .param parameters alias the caller's argument variables
// (which live in local memory), and ret branches to the instruction after
// the call. A recursive call, and a call through a register, run on a real
// call stack instead (call.go). .shared variables inside a .func are load
// errors.

import (
	"fmt"
	"strings"
)

// paramSpace turns a .param access into a local one when the address was
// a .param variable declared in a body or a parameter of an inlined
// function (both placed in local memory).
func (d *decoder) paramSpace(sp space) space {
	if sp == spParam && d.symSpace == spLocal {
		return spLocal
	}
	return sp
}

// inlineCall expands call{.uni} (rets), f, (args).
func (d *decoder) inlineCall(s *astStmt) {
	// call{.uni} (rets), target, (args){, prototype} (PTX ISA §9.7.12.5);
	// the prototype names a .callprototype or a list of possible targets
	// of an indirect call, which emu checks when the call runs instead.
	var rets, args []astArg
	name, proto := "", ""
	for _, a := range s.args {
		switch {
		case a.kind == aList && name == "":
			rets = a.elems
		case a.kind == aList && args == nil:
			args = a.elems
		case a.kind == aName && name == "":
			name = a.name
		case a.kind == aName && proto == "":
			proto = a.name
		default:
			d.errorf("call: unexpected operand %s", argString(a))
			return
		}
	}
	if _, isReg := d.reg(name); isReg {
		target := astArg{kind: aName, name: name}
		d.realCall(s, rets, args, "", &target)
		return
	}
	if rest := strings.TrimPrefix(strings.TrimPrefix(s.op, "call"), ".uni"); rest != "" {
		d.errorf("%s: unsupported modifier %s", s.op, rest)
		return
	}
	f, ok := d.funcs[name]
	if !ok && name == "vprintf" {
		d.vprintfCall(s, rets, args)
		return
	}
	if !ok {
		d.errorf("call: unknown function %s", name)
		return
	}
	if proto != "" {
		d.errorf("call %s: a direct call takes no prototype operand (%s)", name, proto)
		return
	}
	for _, n := range d.stack {
		if n == name {
			d.realCall(s, rets, args, name, nil)
			return
		}
	}
	if len(rets) != len(f.rets) || len(args) != len(f.params) {
		d.errorf("call %s: %d results and %d arguments, the function has %d and %d", name, len(rets), len(args), len(f.rets), len(f.params))
		return
	}
	callLine := s.line
	c := &decoder{m: d.m, f: f, k: d.k, regs: map[string]regInfo{},
		syms: map[string]symbol{}, labels: map[string]int32{}, funcs: d.funcs,
		stack: append(append([]string(nil), d.stack...), name), inFunc: true, modSyms: d.modSyms}
	c.errs = append(c.errs, f.errs...)
	for n, sym := range d.modSyms {
		c.syms[n] = sym
	}

	// A guarded call skips the whole expansion when the guard fails.
	skip := int32(-1)
	if s.guard != "" {
		r, ok := d.reg(s.guard)
		if !ok {
			d.errorf("unknown guard predicate %s", s.guard)
			return
		}
		skip = d.emit(inst{ctl: ctlBra, guard: r.slot * 32, gneg: !s.guardNeg, line: int32(callLine), loc: s.loc, text: "call (guard)"})
	}

	// Parameters in.
	var outs []func()
	bind := func(p astParam, a astArg, in bool) {
		c.line = p.line
		switch p.space {
		case "reg":
			slot := int32(d.k.nregs)
			d.k.nregs++
			c.regs[p.name] = regInfo{slot: slot, typ: p.typ}
			if in {
				d.line = callLine
				src := d.src(a, p.typ)
				d.emit(movInst(slot*32, src, p.typ, callLine, s.loc))
			} else {
				dst := d.dst(a)
				outs = append(outs, func() {
					d.emit(movInst(dst.r, opnd{kind: oReg, r: slot * 32, r2: -1}, p.typ, callLine, s.loc))
				})
			}
		default: // .param: alias the caller's variable
			sym, ok := d.syms[a.name]
			if a.kind != aName || !ok || sym.space != spLocal {
				d.line = callLine
				d.errorf("call %s: argument for .param %s must be a .param variable of the caller, found %s", name, p.name, argString(a))
				return
			}
			c.syms[p.name] = sym
		}
	}
	for i, p := range f.params {
		bind(p, args[i], true)
	}
	for i, p := range f.rets {
		bind(p, rets[i], false)
	}

	// The callee's registers and variables.
	for _, r := range f.regs {
		c.line = r.line
		c.declareReg(r)
	}
	for _, v := range f.vars {
		c.line = v.line
		switch v.space {
		case "local":
			off := alignUp(d.k.localBytes, v.alignment())
			c.syms[v.name] = symbol{space: spLocal, off: off, typ: v.typ}
			d.k.localBytes = off + v.size()
		default:
			c.errorf("%s: .%s variables in a .func are not supported", v.name, v.space)
		}
	}

	c.emitBody(f.stmts)
	d.errs = append(d.errs, c.errs...)
	for _, o := range outs {
		o()
	}
	if skip >= 0 {
		d.k.code[skip].target = int32(len(d.k.code))
	}
	d.line = callLine
}

// movInst builds a register move for call arguments and results.
func movInst(dst int32, src opnd, t dtype, line int, loc locRef) inst {
	mask := t.mask()
	if t == tPred {
		mask = 1
	}
	in := inst{guard: -1, t: t, line: int32(line), loc: loc, text: fmt.Sprintf("mov.%s (call)", t)}
	in.ops[0] = opnd{kind: oReg, r: dst, r2: -1}
	in.ops[1] = src
	in.fn = unop(func(a uint64) uint64 { return a & mask })
	return in
}
