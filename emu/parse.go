package emu

// Parsing PTX module structure: module directives, variables, entries and
// functions (PTX ISA §11). Statements inside a body are in parse_stmt.go.

import (
	"fmt"
	"strconv"
	"strings"
)

type parser struct {
	toks []token
	pos  int
	errs ErrorList // module-level errors
	mod  *astModule

	fn     *astFunc // the function whose body is being parsed, or nil
	scopes []scope  // open { } blocks inside fn's body, innermost last
	nscope int
}

// parse builds the syntax tree of a PTX module, collecting every error.
// On a lexical error the tree is nil.
func parse(src []byte) (*astModule, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, ErrorList{err.(*SyntaxError)}
	}
	p := &parser{toks: toks, mod: &astModule{files: map[int]string{}}}
	p.module()
	if len(p.errs) > 0 {
		// The tree holds every statement that parsed, so that decoding can
		// report its own errors too.
		return p.mod, p.errs
	}
	return p.mod, nil
}

// bail is panicked inside the parser to abandon a statement; recovered by
// the statement loops, never across the package boundary.
type bail struct{}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) peekAt(k int) token {
	if p.pos+k < len(p.toks) {
		return p.toks[p.pos+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

// errorf records an error: the function's while its body is parsed (so
// that it rejects only the entries that need that function), else the
// module's.
func (p *parser) errorf(line int, format string, args ...any) {
	e := &SyntaxError{line, fmt.Sprintf(format, args...)}
	if p.fn != nil {
		p.fn.errs = append(p.fn.errs, e)
		return
	}
	p.errs = append(p.errs, e)
}

// fail records an error at the current token and abandons the statement.
func (p *parser) fail(format string, args ...any) {
	p.errorf(p.peek().line, format, args...)
	panic(bail{})
}

func (p *parser) isPunct(s string) bool {
	t := p.peek()
	return t.kind == tokPunct && t.text == s
}

func (p *parser) accept(s string) bool {
	if p.isPunct(s) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expect(s string) {
	if !p.accept(s) {
		p.fail("expected %q, found %s", s, p.peek())
	}
}

func (p *parser) ident() token {
	t := p.peek()
	if t.kind != tokIdent {
		p.fail("expected a name, found %s", t)
	}
	return p.next()
}

func (p *parser) integer() int64 {
	neg := p.accept("-")
	t := p.peek()
	if t.kind != tokNumber {
		p.fail("expected an integer, found %s", t)
	}
	p.next()
	v, err := parseInt(t.text)
	if err != nil {
		p.errorf(t.line, "%v", err)
		panic(bail{})
	}
	if neg {
		v = -v
	}
	return v
}

// parseInt parses a PTX integer constant: decimal, 0x hex, 0 octal, 0b
// binary, with an optional U suffix (PTX ISA §4.5.1).
func parseInt(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(s, "U"), "u")
	base := 10
	switch {
	case strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X"):
		base, t = 16, t[2:]
	case strings.HasPrefix(t, "0b") || strings.HasPrefix(t, "0B"):
		base, t = 2, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	u, err := strconv.ParseUint(t, base, 64)
	if err != nil {
		return 0, fmt.Errorf("bad integer constant %q", s)
	}
	return int64(u), nil
}

// skipLine drops the remaining tokens on line.
func (p *parser) skipLine(line int) {
	for p.peek().kind != tokEOF && p.peek().line == line {
		p.next()
	}
}

// recoverTo skips past the next ';' (or to a '}' at this level) after an
// error so that later statements are still checked.
func (p *parser) recoverTo() {
	for {
		t := p.peek()
		switch {
		case t.kind == tokEOF:
			return
		case t.kind == tokPunct && t.text == ";":
			p.next()
			return
		case t.kind == tokPunct && t.text == "}":
			return
		}
		p.next()
	}
}

func (p *parser) module() {
	for p.peek().kind != tokEOF {
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
			p.topLevel()
		}()
	}
}

func (p *parser) topLevel() {
	t := p.next()
	if t.kind != tokIdent || !strings.HasPrefix(t.text, ".") {
		p.errorf(t.line, "expected a directive at module scope, found %s", t)
		panic(bail{})
	}
	switch t.text {
	case ".version":
		v := p.next()
		p.mod.version = v.text
	case ".target":
		for {
			p.mod.target = append(p.mod.target, p.ident().text)
			if !p.accept(",") {
				break
			}
		}
	case ".address_size":
		p.mod.addrSize = int(p.integer())
		if p.mod.addrSize != 64 {
			p.errorf(t.line, ".address_size %d: only 64 is supported", p.mod.addrSize)
		}
	case ".file":
		idx := int(p.integer())
		s := p.next()
		if s.kind != tokString {
			p.errorf(s.line, ".file: expected a quoted path, found %s", s)
			panic(bail{})
		}
		p.mod.files[idx] = s.text
		p.skipLine(s.line)
	case ".section":
		p.ident()
		p.skipBraces()
	case ".pragma":
		p.next()
		p.accept(";")
	case ".visible", ".extern", ".weak", ".common":
		p.linkage(t)
	case ".entry", ".func":
		p.function(t, false)
	case ".global", ".shared", ".const", ".local":
		for _, v := range p.varDecl(t, false) {
			p.mod.vars = append(p.mod.vars, v)
		}
	default:
		p.errorf(t.line, "unsupported module directive %s", t.text)
		panic(bail{})
	}
}

func (p *parser) linkage(t token) {
	extern := t.text == ".extern"
	for p.peek().kind == tokIdent && (p.peek().text == ".visible" || p.peek().text == ".weak" || p.peek().text == ".extern") {
		p.next()
	}
	n := p.next()
	switch n.text {
	case ".entry", ".func":
		p.function(n, extern)
	case ".global", ".shared", ".const", ".local":
		for _, v := range p.varDecl(n, extern) {
			p.mod.vars = append(p.mod.vars, v)
		}
	default:
		p.errorf(n.line, "expected .entry, .func or a variable after %s, found %s", t.text, n)
		panic(bail{})
	}
}

func (p *parser) skipBraces() {
	p.expect("{")
	depth := 1
	for depth > 0 && p.peek().kind != tokEOF {
		switch {
		case p.isPunct("{"):
			depth++
		case p.isPunct("}"):
			depth--
		}
		p.next()
	}
}

// varDecl parses the rest of a variable declaration after its state space
// (PTX ISA §5.4.1): .align, .v2/.v4, the type, then names with array
// dimensions and an optional initializer.
func (p *parser) varDecl(space token, extern bool) []*astVar {
	base := astVar{line: space.line, space: space.text[1:], extern: extern, vec: 1}
	for p.peek().kind == tokIdent && strings.HasPrefix(p.peek().text, ".") {
		d := p.next()
		switch {
		case d.text == ".align":
			base.align = int(p.integer())
		case d.text == ".v2":
			base.vec = 2
		case d.text == ".v4":
			base.vec = 4
		case d.text == ".v8":
			base.vec = 8
		case d.text == ".attribute":
			p.skipParens()
		case strings.HasPrefix(d.text, ".ptr"):
		default:
			t, ok := typeByName[d.text[1:]]
			if !ok {
				p.errorf(d.line, "unknown type or attribute %s in variable declaration", d.text)
				panic(bail{})
			}
			base.typ = t
		}
	}
	if base.typ == tNone {
		p.fail("variable declaration without a type")
	}
	var out []*astVar
	for {
		v := base
		v.name = p.ident().text
		v.count = 1
		for p.accept("[") {
			if p.accept("]") {
				v.count = -1
				continue
			}
			n := p.integer()
			p.expect("]")
			if v.count >= 0 {
				v.count *= int(n)
			}
		}
		if p.accept("=") {
			v.init = p.initializer(&v)
		}
		out = append(out, &v)
		if !p.accept(",") {
			break
		}
	}
	p.expect(";")
	return out
}

func (p *parser) skipParens() {
	p.expect("(")
	depth := 1
	for depth > 0 && p.peek().kind != tokEOF {
		switch {
		case p.isPunct("("):
			depth++
		case p.isPunct(")"):
			depth--
		}
		p.next()
	}
}

// initializer parses = value or = {v, {v, v}, ...} flattened in order.
func (p *parser) initializer(v *astVar) []uint64 {
	var vals []uint64
	var walk func()
	walk = func() {
		if p.accept("{") {
			for !p.isPunct("}") {
				walk()
				if !p.accept(",") {
					break
				}
			}
			p.expect("}")
			return
		}
		a := p.constArg()
		vals = append(vals, constBits(a, v.typ))
	}
	walk()
	return vals
}

// constArg parses a numeric constant.
func (p *parser) constArg() astArg {
	neg := p.accept("-")
	t := p.peek()
	if t.kind != tokNumber {
		p.fail("expected a constant, found %s", t)
	}
	p.next()
	a, err := numberArg(t.text)
	if err != nil {
		p.errorf(t.line, "%v", err)
		panic(bail{})
	}
	if neg {
		a = negateArg(a)
	}
	return a
}

// function parses .entry and .func declarations (PTX ISA §11.2).
func (p *parser) function(kw token, extern bool) {
	f := &astFunc{line: kw.line, entry: kw.text == ".entry"}
	if !f.entry && p.isPunct("(") {
		f.rets = p.paramList()
	}
	f.name = p.ident().text
	if p.isPunct("(") {
		f.params = p.paramList()
	}
	for p.peek().kind == tokIdent {
		d := p.next()
		switch d.text {
		case ".maxntid", ".reqntid":
			var dims [3]int
			for i := 0; i < 3; i++ {
				dims[i] = int(p.integer())
				if !p.accept(",") {
					break
				}
			}
			if d.text == ".maxntid" {
				f.maxntid = dims
			} else {
				f.reqntid = dims
			}
		case ".minnctapersm", ".maxnreg", ".maxnctapersm", ".maxclusterrank":
			p.integer()
		case ".reqnctapercluster":
			for {
				p.integer()
				if !p.accept(",") {
					break
				}
			}
		case ".noreturn", ".explicitcluster":
		case ".pragma":
			p.next()
			p.accept(";")
		default:
			p.errorf(d.line, "unsupported directive %s in %s header", d.text, f.name)
			panic(bail{})
		}
	}
	if p.accept(";") {
		f.proto = true
		p.mod.funcs = append(p.mod.funcs, f)
		return
	}
	if extern {
		p.fail("%s: an .extern function has no body", f.name)
	}
	p.expect("{")
	p.body(f)
	p.mod.funcs = append(p.mod.funcs, f)
}

// paramList parses ( .param .type name, ... ).
func (p *parser) paramList() []astParam {
	p.expect("(")
	var ps []astParam
	for !p.isPunct(")") {
		sp := p.ident()
		if sp.text != ".param" && sp.text != ".reg" {
			p.errorf(sp.line, "expected .param or .reg, found %s", sp)
			panic(bail{})
		}
		prm := astParam{line: sp.line, space: sp.text[1:], count: 1}
		for p.peek().kind == tokIdent && strings.HasPrefix(p.peek().text, ".") {
			d := p.next()
			switch {
			case d.text == ".align":
				prm.align = int(p.integer())
			case strings.HasPrefix(d.text, ".ptr"):
				// .ptr.global.align 16, or (Triton) .ptr .global .align 1:
				// the pointee's space and alignment, which only inform the
				// JIT (PTX ISA §5.1.6.1).
				if strings.HasSuffix(d.text, ".align") {
					p.integer()
					break
				}
				for p.peek().kind == tokIdent {
					switch p.peek().text {
					case ".global", ".shared", ".const", ".local":
						p.next()
						continue
					case ".align":
						p.next()
						p.integer()
					}
					break
				}
			default:
				t, ok := typeByName[d.text[1:]]
				if !ok {
					p.errorf(d.line, "unknown parameter type %s", d.text)
					panic(bail{})
				}
				prm.typ = t
			}
		}
		prm.name = p.ident().text
		for p.accept("[") {
			prm.count *= int(p.integer())
			p.expect("]")
		}
		if prm.typ == tNone {
			p.errorf(prm.line, "parameter %s has no type", prm.name)
		}
		ps = append(ps, prm)
		if !p.accept(",") {
			break
		}
	}
	p.expect(")")
	return ps
}
