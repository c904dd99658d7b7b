package emu

// Block scopes inside a function body (PTX ISA §11.1.1): a name declared
// inside { } is visible only there and may repeat a name of an enclosing
// scope. The parser gives each such declaration a unique name and renames
// the uses it sees while the block is open, so that nothing after the
// parser knows about blocks.

import "fmt"

// scope is an open { } block.
type scope struct {
	id    int
	line  int
	names map[string]string // declared name -> unique name
}

// declName records a declaration in the innermost open block and returns
// its unique name: the name, then the block's number and line, which no
// PTX identifier can spell, so it cannot collide and still reads well in
// messages.
func (p *parser) declName(name string) string {
	if len(p.scopes) == 0 {
		return name
	}
	s := &p.scopes[len(p.scopes)-1]
	u := fmt.Sprintf("%s (block %d at line %d)", name, s.id, s.line)
	s.names[name] = u
	return u
}

// declare renames variables declared in a block.
func (p *parser) declare(vs []*astVar) []*astVar {
	for _, v := range vs {
		v.name = p.declName(v.name)
	}
	return vs
}

// scoped resolves a name used in a statement: the innermost block that
// declares it, or the name itself (function scope, module scope, labels,
// special registers).
func (p *parser) scoped(name string) string {
	for i := len(p.scopes) - 1; i >= 0; i-- {
		if u, ok := p.scopes[i].names[name]; ok {
			return u
		}
	}
	return name
}

// rename applies scoped to every name in an operand.
func (p *parser) rename(a astArg) astArg {
	if len(p.scopes) == 0 {
		return a
	}
	switch a.kind {
	case aName, aAddr:
		if a.name != "" {
			a.name = p.scoped(a.name)
		}
	case aVec, aList, aPair:
		el := make([]astArg, len(a.elems))
		for i, e := range a.elems {
			el[i] = p.rename(e)
		}
		a.elems = el
	}
	return a
}
