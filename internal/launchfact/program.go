package launchfact

// Program evaluates a kernel's facts on every launch, so it is flat:
// postfix steps over a fixed stack, no recursion and no allocation
// (a launch's host cost is about a microsecond; the recursive Holds took
// 0.8 µs for MatMulMMA's eight facts).

// step is one postfix instruction: push a constant, a parameter's value
// or length, apply an operator to the top two, or (op '>') pop a
// comparison's operands and stop with false unless x ≥ y.
type step struct {
	op byte
	c  int64
	i  int
}

// maxStack bounds the stack a Program needs; Compile rejects deeper facts.
const maxStack = 32

// Program is a conjunction of facts compiled to postfix steps.
type Program struct {
	steps []step
	ok    bool
}

// Compile compiles facts, each a comparison as Parse returns. A fact too
// deep to evaluate on the fixed stack makes the program never hold.
func Compile(facts []*Expr) *Program {
	p := &Program{ok: true}
	for _, f := range facts {
		if f.op != '>' || f.depth() > maxStack {
			p.ok = false
			return p
		}
		p.steps = f.postfix(p.steps)
	}
	return p
}

func (e *Expr) depth() int {
	if e.x == nil {
		return 1
	}
	return max(e.x.depth(), 1+e.y.depth())
}

func (e *Expr) postfix(s []step) []step {
	switch e.op {
	case 'c', 'p', 'l':
		return append(s, step{op: e.op, c: e.c, i: e.i})
	}
	s = e.x.postfix(s)
	s = e.y.postfix(s)
	return append(s, step{op: e.op})
}

// Holds reports whether every fact holds for a; false when an operand is
// missing or an evaluation overflows int64 or divides by zero.
func (p *Program) Holds(a Args) bool {
	if !p.ok {
		return false
	}
	var st [maxStack]int64
	n := 0
	for _, s := range p.steps {
		switch s.op {
		case 'c':
			st[n] = s.c
			n++
			continue
		case 'p', 'l':
			var v int64
			var ok bool
			if s.op == 'p' {
				v, ok = a.Value(s.i)
			} else {
				v, ok = a.Len(s.i)
			}
			if !ok {
				return false
			}
			st[n] = v
			n++
			continue
		}
		x, y := st[n-2], st[n-1]
		n -= 2
		if s.op == '>' {
			if x < y {
				return false
			}
			continue
		}
		v, ok := apply(s.op, x, y)
		if !ok {
			return false
		}
		st[n] = v
		n++
	}
	return true
}
