package emu

// Parsing a function body: register and variable declarations, .loc,
// labels and instructions with their operands (PTX ISA §4.3, §6).

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// body parses statements up to the '}' that closes the function. Nested
// { } blocks open a scope (PTX ISA §11.1.1: "{ }" groups statements and
// declarations inside it are local to the block): clang opens one per
// call sequence, per bar.red and per inlined cuda_fp16 helper, and
// declares the same register names again in each. A name declared in a
// nested block is renamed to a unique name (see scoped) and its uses
// inside the block follow, so the decoder sees one flat function.
//
// Errors found in the body are the function's (astFunc.errs), not the
// module's: one bad entry leaves the others loadable.
func (p *parser) body(f *astFunc) {
	depth := 1
	var loc locRef
	p.fn = f
	defer func() { p.fn, p.scopes = nil, nil }()
	for {
		t := p.peek()
		if t.kind == tokEOF {
			p.errorf(t.line, "%s: missing '}' at end of function", f.name)
			return
		}
		if p.accept("{") {
			depth++
			p.nscope++
			p.scopes = append(p.scopes, scope{id: p.nscope, line: t.line, names: map[string]string{}})
			continue
		}
		if p.accept("}") {
			depth--
			if depth == 0 {
				return
			}
			p.scopes = p.scopes[:len(p.scopes)-1]
			continue
		}
		start := p.pos
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(bail); !ok {
						panic(r)
					}
					if p.pos == start {
						p.next()
					}
					p.recoverTo()
				}
			}()
			p.statement(f, &loc)
		}()
	}
}

func (p *parser) statement(f *astFunc, loc *locRef) {
	t := p.peek()
	if t.kind == tokIdent && strings.HasPrefix(t.text, ".") {
		p.next()
		if strings.HasPrefix(t.text, ".reg.") {
			// .reg.b16 hl, hu; with no space, as cuda_fp16.hpp's inline
			// asm writes it: one token to the lexer.
			p.regDecl(f, t)
			return
		}
		switch t.text {
		case ".reg":
			p.regDecl(f, t)
		case ".shared", ".local", ".global", ".const":
			f.vars = append(f.vars, p.declare(p.varDecl(t, false))...)
		case ".extern":
			// .extern .shared x[] inside a body: ptxas accepts it only at
			// module scope, but its meaning is unambiguous.
			sp := p.ident()
			if sp.text != ".shared" {
				p.errorf(sp.line, ".extern %s in a function body: only .shared is supported", sp.text)
				panic(bail{})
			}
			f.vars = append(f.vars, p.declare(p.varDecl(sp, true))...)
		case ".param":
			// A call's argument buffer in a .func-calling body: modelled as
			// per-thread local memory.
			t.text = ".local"
			f.vars = append(f.vars, p.declare(p.varDecl(t, false))...)
		case ".loc":
			file := int(p.integer())
			line := int(p.integer())
			col := 0
			if p.peek().kind == tokNumber && p.peek().line == t.line {
				col = int(p.integer())
			}
			*loc = locRef{file, line, col}
			p.skipLine(t.line)
		case ".pragma":
			p.next()
			p.expect(";")
		case ".callprototype":
			// label: .callprototype (rets) _ (params); describes the
			// targets of an indirect call, which emu checks when it runs.
			for !p.isPunct(";") && p.peek().kind != tokEOF {
				p.next()
			}
			p.expect(";")
		default:
			p.errorf(t.line, "unsupported directive %s in function body", t.text)
			panic(bail{})
		}
		return
	}
	if t.kind == tokIdent && p.peekAt(1).kind == tokPunct && p.peekAt(1).text == ":" {
		p.next()
		p.next()
		f.stmts = append(f.stmts, astStmt{line: t.line, label: t.text})
		return
	}
	st := astStmt{line: t.line, loc: *loc}
	if p.accept("@") {
		st.guardNeg = p.accept("!")
		st.guard = p.scoped(p.ident().text)
	}
	st.op = p.ident().text
	if strings.HasPrefix(st.op, ".") || strings.HasPrefix(st.op, "%") {
		p.errorf(t.line, "expected an instruction, found %q", st.op)
		panic(bail{})
	}
	for !p.isPunct(";") {
		st.args = append(st.args, p.rename(p.operand()))
		if !p.accept(",") {
			break
		}
	}
	p.expect(";")
	f.stmts = append(f.stmts, st)
}

// regDecl parses .reg .type name<N>, name, ...; (PTX ISA §5.1.1).
func (p *parser) regDecl(f *astFunc, kw token) {
	var typ dtype
	// Modifiers written into the keyword (.reg.b16) come first.
	var glued []token
	for _, w := range strings.Split(kw.text, ".")[2:] {
		glued = append(glued, token{kind: tokIdent, text: "." + w, line: kw.line})
	}
	for len(glued) > 0 || p.peek().kind == tokIdent && strings.HasPrefix(p.peek().text, ".") {
		var d token
		if len(glued) > 0 {
			d, glued = glued[0], glued[1:]
		} else {
			d = p.next()
		}
		if d.text == ".v2" || d.text == ".v4" {
			p.errorf(d.line, "vector registers (.reg %s) are not supported", d.text)
			panic(bail{})
		}
		if d.text == ".align" {
			p.integer()
			continue
		}
		t, ok := typeByName[d.text[1:]]
		if !ok {
			p.errorf(d.line, "unknown register type %s", d.text)
			panic(bail{})
		}
		typ = t
	}
	if typ == tNone {
		p.fail(".reg without a type")
	}
	for {
		name := p.ident()
		r := astReg{line: name.line, typ: typ, name: name.text, n: -1}
		if p.accept("<") {
			r.n = int(p.integer())
			p.expect(">")
		}
		switch {
		case len(p.scopes) == 0:
			f.regs = append(f.regs, r)
		case r.n < 0:
			r.name = p.declName(r.name)
			f.regs = append(f.regs, r)
		default:
			// A range in a block: each register gets its own scoped name.
			for i := 0; i < r.n; i++ {
				f.regs = append(f.regs, astReg{line: r.line, typ: typ, name: p.declName(r.name + strconv.Itoa(i)), n: -1})
			}
		}
		if !p.accept(",") {
			break
		}
	}
	p.expect(";")
}

// operand parses one instruction operand.
func (p *parser) operand() astArg {
	t := p.peek()
	switch {
	case p.accept("{"):
		a := astArg{kind: aVec}
		for !p.isPunct("}") {
			a.elems = append(a.elems, p.operand())
			if !p.accept(",") {
				break
			}
		}
		p.expect("}")
		return a
	case p.accept("("):
		a := astArg{kind: aList}
		for !p.isPunct(")") {
			a.elems = append(a.elems, p.operand())
			if !p.accept(",") {
				break
			}
		}
		p.expect(")")
		return a
	case p.accept("["):
		a := astArg{kind: aAddr}
		switch p.peek().kind {
		case tokIdent:
			a.name = p.next().text
		case tokNumber:
			a.imm = uint64(p.integer())
			p.expect("]")
			return a
		default:
			p.fail("expected an address, found %s", p.peek())
		}
		if p.accept("+") {
			a.imm = uint64(p.integer()) // accepts [r+-4]
		} else if p.isPunct("-") {
			a.imm = uint64(p.integer())
		}
		if p.accept(",") { // [tensorMap, {c0, c1, ...}] of cp.async.bulk.tensor
			a.elems = append(a.elems, p.operand())
		}
		p.expect("]")
		return a
	case p.accept("!"):
		a := astArg{kind: aName, name: p.ident().text, neg: true}
		return a
	case t.kind == tokIdent:
		p.next()
		a := astArg{kind: aName, name: t.text}
		if p.accept("|") {
			b := p.ident()
			return astArg{kind: aPair, elems: []astArg{a, {kind: aName, name: b.text}}}
		}
		return a
	case t.kind == tokNumber || t.kind == tokPunct && t.text == "-":
		return p.constArg()
	}
	p.fail("unexpected %s in operand", t)
	return astArg{}
}

// numberArg classifies a numeric token: 0fXXXXXXXX and 0dXXXXXXXXXXXXXXXX
// are exact float bit patterns (PTX ISA §4.5.2), a literal with '.' or an
// exponent is a float64, anything else an integer.
func numberArg(s string) (astArg, error) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F') {
		if len(s) != 10 {
			return astArg{}, fmt.Errorf("float constant %q: want 0f and 8 hex digits", s)
		}
		v, err := strconv.ParseUint(s[2:], 16, 32)
		if err != nil {
			return astArg{}, fmt.Errorf("bad float constant %q", s)
		}
		return astArg{kind: aF32, imm: v}, nil
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'd' || s[1] == 'D') {
		if len(s) != 18 {
			return astArg{}, fmt.Errorf("double constant %q: want 0d and 16 hex digits", s)
		}
		v, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return astArg{}, fmt.Errorf("bad double constant %q", s)
		}
		return astArg{kind: aF64, imm: v}, nil
	}
	if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") && strings.ContainsAny(s, ".eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return astArg{}, fmt.Errorf("bad float constant %q", s)
		}
		return astArg{kind: aF64, imm: math.Float64bits(f)}, nil
	}
	v, err := parseInt(s)
	if err != nil {
		return astArg{}, err
	}
	return astArg{kind: aImm, imm: uint64(v)}, nil
}

func negateArg(a astArg) astArg {
	switch a.kind {
	case aImm:
		a.imm = -a.imm
	case aF32:
		a.imm ^= 1 << 31
	case aF64:
		a.imm ^= 1 << 63
	}
	return a
}

// constBits converts a constant operand to the bit pattern of type t:
// integers convert to floats by value, float literals to the width of t.
func constBits(a astArg, t dtype) uint64 {
	switch {
	case t == tF32:
		switch a.kind {
		case aF32:
			return a.imm
		case aF64:
			return uint64(math.Float32bits(float32(math.Float64frombits(a.imm))))
		}
		return uint64(math.Float32bits(float32(int64(a.imm))))
	case t == tF64:
		switch a.kind {
		case aF64:
			return a.imm
		case aF32:
			return math.Float64bits(float64(math.Float32frombits(uint32(a.imm))))
		}
		return math.Float64bits(float64(int64(a.imm)))
	case t == tF16 || t == tBF16:
		if a.kind == aImm {
			return a.imm & 0xffff
		}
		f := math.Float64frombits(a.imm)
		if a.kind == aF32 {
			f = float64(math.Float32frombits(uint32(a.imm)))
		}
		if t == tF16 {
			return uint64(narrow(f, fmtF16, rnRN))
		}
		return uint64(narrow(f, fmtBF16, rnRN))
	}
	if a.kind == aF32 || a.kind == aF64 {
		return a.imm & t.mask() // a bit pattern given as a float literal
	}
	return a.imm & t.mask()
}
