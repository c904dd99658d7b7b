package compiler

// Checks of a 32-bit entry proven by launch facts.
//
// The range analysis bounds values by constants, so a guarded access of a
// 2-D tile, in[r*cols+c] under `r < rows && c < cols`, keeps its check:
// no interval bounds r*cols+c below len(in). It is in bounds, though,
// whenever cols ≥ 0 and len(in) ≥ (rows−1)·cols + (cols−1) + 1, a fact
// about the launch's arguments alone. A 32-bit entry (index32.go) is
// already chosen by a test of the launch's arguments, so it can take more
// of them: this pass proves such a check from a fact, leaves it out of the
// 32-bit entry, and records the fact in Kernel.Facts32; the launch runs the
// 32-bit entry only when every fact holds (kern's index32.go, evaluated
// exactly by internal/launchfact), else the kernel's entry, which keeps
// every check. So the report stays exact: where a fact fails, the access
// that really fails reports its own index, length and position, and a
// short slice that no access reaches reports nothing. The kernel's entry
// and native mode do not change.
//
// The proof. The index is written as a polynomial Σ c·Πatoms·Πsyms, where
// syms are launch-time values (integer parameters, slice lengths and +, −,
// ·, / of them, as the kernel computes them: tilesN := n/8) and atoms are
// the other values, each bounded 0 ≤ a ≤ hi(a) wherever the access runs:
//
//   - a dominating branch a < E, a ≤ E or s·a < E (s a positive constant,
//     E a sym; also its negation on the other edge): hi = E−1, E, (E−1)/s.
//     When a and E are both multiples of 2ᵗ (align.go; a loop counter
//     stepping by 16 under k%16 == 0), a < E gives hi = E−2ᵗ;
//   - else its interval, when that is small (thread and lane indices);
//   - else a remainder x % E of a sym: hi = E−1, with the fact E ≥ 1.
//
// An atom's lower bound 0 is its interval's, or for a quotient x / E of a
// sym with x ≥ 0 the fact E ≥ 1. With every coefficient c > 0, each sym
// factor ≥ 0 (a fact) and the constant term ≥ 0, the index lies in
// [0, Σ c·Πhi·Πsyms], and the check is proven by len(x) ≥ that bound + 1.
// Go's integers wrap, but +, −, · agree with the integers mod 2⁶⁴, so the
// computed index equals the polynomial's value, which the facts put in
// [0, len(x)): no wrap can have happened. A bound such as (E−1)/s that is
// negative at a launch only makes an atom's range empty, and then the
// access does not run. A value with a guard is an atom even when it is a
// sum (r = r0+ty+k under r < rows), so the fact names the guard's bound,
// not the ranges of r's parts.
//
// The facts of all proven accesses must hold for the 32-bit entry to run
// at all, so one access whose fact a typical launch misses would cost
// every launch the faster entry. A fact is therefore only taken for an
// access whose index has an atom bounded by a guard on launch values
// (r < rows, a loop's k0 < k, tm·16 < m): the guard states the extent the
// author meant the slice to have. A thread index in a dimension the
// block= directive sizes counts as such an atom: the directive states it
// (thread k of block=256 takes hist[k]: the fact is len(hist) ≥ 256). An unguarded x[a*b] is left to its
// check, whose fact len(x) > a·b a launch that never runs it may miss.

import (
	"go/token"
	"go/types"
	"math"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
	lf "github.com/gokern/kern/internal/launchfact"
)

// smallAtom bounds the intervals a proof uses as they are: larger ones
// (block indices, whole-grid indices) would make facts no launch meets.
const smallAtom = 1 << 16

// noteLaunchParam records, in a 32-bit entry, that register r holds the
// value (or, with isLen, the slice length) of kernel parameter i.
func (kb *kernelBuilder) noteLaunchParam(r ir.Reg, i int, isLen bool) {
	if !kb.idx32 {
		return
	}
	if kb.launchRegs == nil {
		kb.launchRegs = map[ir.Reg]*lf.Expr{}
	}
	if isLen {
		kb.launchRegs[r] = lf.Len(i)
	} else {
		kb.launchRegs[r] = lf.Param(i)
	}
}

// factProver proves one activation's checks from launch facts.
type factProver struct {
	kb    *kernelBuilder
	fr    *frame
	facts []*lf.Expr // those the current proof needs
}

// mono is c·Πatoms·Πsyms.
type mono struct {
	c     int64
	atoms []ssa.Value
	syms  []*lf.Expr
}

// maxMonos bounds a polynomial's size, maxCoef its coefficients.
const (
	maxMonos = 16
	maxCoef  = 1 << 24
)

// proveByLaunchFacts marks safe, in a 32-bit entry, each global access of
// fr whose check a launch fact proves, and adds the facts to the kernel.
func (kb *kernelBuilder) proveByLaunchFacts(fr *frame) {
	if !kb.idx32 || !kb.bounds || kb.cfg.KeepChecks || fr.ranges == nil || fr.align == nil || len(kb.launchRegs) == 0 {
		return
	}
	p := &factProver{kb: kb, fr: fr}
	for _, b := range fr.fn.Blocks {
		for _, instr := range b.Instrs {
			ia, ok := instr.(*ssa.IndexAddr)
			if !ok || fr.safe[ia] {
				continue
			}
			p.facts = p.facts[:0]
			n, terms, c, ok := p.prove(ia)
			if !ok {
				continue
			}
			fr.safe[ia] = true
			if fr.factSafe == nil {
				fr.factSafe = map[*ssa.IndexAddr]bool{}
			}
			fr.factSafe[ia] = true
			if kb.factSet == nil {
				kb.factSet = &factSet{}
			}
			for _, f := range p.facts {
				kb.factSet.simple(f)
			}
			kb.factSet.length(n, terms, c)
			kb.k.Facts32 = kb.factSet.list()
		}
	}
}

// factSet is a kernel's launch facts: simple ones (s ≥ 0, E ≥ 1) once
// each, and per slice and symbolic bound one length fact
// len ≥ Σterms + c with the largest c its accesses need (a[i], a[i+1]
// and a[i+9] need one fact, not three).
type factSet struct {
	simples []string
	lens    []lenFact
}

type lenFact struct {
	n     *lf.Expr
	terms []*lf.Expr
	key   string
	c     int64
}

func (fs *factSet) simple(f *lf.Expr) {
	if s := f.String(); !slices.Contains(fs.simples, s) {
		fs.simples = append(fs.simples, s)
	}
}

func (fs *factSet) length(n *lf.Expr, terms []*lf.Expr, c int64) {
	key := n.String()
	for _, t := range terms {
		key += " " + t.String()
	}
	for i := range fs.lens {
		if fs.lens[i].key == key {
			fs.lens[i].c = max(fs.lens[i].c, c)
			return
		}
	}
	fs.lens = append(fs.lens, lenFact{n: n, terms: terms, key: key, c: c})
}

func (fs *factSet) list() []string {
	out := slices.Clone(fs.simples)
	for _, l := range fs.lens {
		ub := lf.Const(l.c)
		for _, t := range l.terms {
			ub = add(ub, t)
		}
		out = append(out, lf.GE(l.n, ub).String())
	}
	return out
}

// prove reports whether facts prove ia in bounds: those in p.facts, and
// len(x) = n ≥ Σterms + c.
func (p *factProver) prove(ia *ssa.IndexAddr) (n *lf.Expr, terms []*lf.Expr, c int64, ok bool) {
	if _, ok := ia.X.Type().Underlying().(*types.Slice); !ok {
		return nil, nil, 0, false
	}
	n = p.lenSym(ia.X)
	if n == nil {
		return nil, nil, 0, false
	}
	b := ia.Block()
	poly, ok := p.poly(ia.Index, b, 0)
	if !ok {
		return nil, nil, 0, false
	}
	c = 1 // len ≥ the largest index + 1
	guarded := false
	for _, m := range poly {
		if len(m.atoms) == 0 && len(m.syms) == 0 {
			if m.c < 0 {
				return nil, nil, 0, false // the index's lower bound would need a fact of its own
			}
			c += m.c
			continue
		}
		if m.c <= 0 {
			return nil, nil, 0, false
		}
		term := lf.Const(m.c)
		for _, a := range m.atoms {
			hi, byGuard, ok := p.atomHi(a, b)
			if !ok {
				return nil, nil, 0, false
			}
			guarded = guarded || byGuard
			term = mul(term, hi)
		}
		for _, s := range m.syms {
			if _, ok := s.IsConst(); !ok {
				p.facts = append(p.facts, lf.GE(s, lf.Const(0)))
			}
			term = mul(term, s)
		}
		terms = append(terms, term)
	}
	if c > maxCoef || !guarded {
		return nil, nil, 0, false
	}
	slices.SortFunc(terms, func(x, y *lf.Expr) int { return strings.Compare(x.String(), y.String()) })
	return n, terms, c, true
}

// add and mul build x+y and x·y, folding constants.
func add(x, y *lf.Expr) *lf.Expr {
	cx, okx := x.IsConst()
	cy, oky := y.IsConst()
	switch {
	case okx && oky && math.Abs(float64(cx)+float64(cy)) < 1<<62:
		return lf.Const(cx + cy)
	case okx && cx == 0:
		return y
	case oky && cy == 0:
		return x
	}
	return lf.Op('+', x, y)
}

func mul(x, y *lf.Expr) *lf.Expr {
	cx, okx := x.IsConst()
	cy, oky := y.IsConst()
	switch {
	case okx && oky && math.Abs(float64(cx)*float64(cy)) < 1<<62:
		return lf.Const(cx * cy)
	case okx && cx == 1:
		return y
	case oky && cy == 1:
		return x
	}
	return lf.Op('*', x, y)
}

// isInt reports whether v is a 64-bit signed integer (int, int64): the
// type whose arithmetic the polynomial and the facts model.
func isInt(v ssa.Value) bool {
	t, ok := v.Type().Underlying().(*types.Basic)
	return ok && (t.Kind() == types.Int || t.Kind() == types.Int64)
}

// sym returns v as a launch-time expression, or nil.
func (p *factProver) sym(v ssa.Value, depth int) *lf.Expr {
	if depth > 6 || !isInt(v) {
		return nil
	}
	switch v := v.(type) {
	case *ssa.Const:
		if c, ok := constInt(v); ok {
			return lf.Const(c)
		}
	case *ssa.Parameter:
		a := p.fr.vals[v]
		if a == nil || len(a.ops) != 1 {
			return nil
		}
		switch o := a.ops[0]; o.Kind {
		case ir.KImm:
			return lf.Const(int64(o.Imm))
		case ir.KReg:
			if e := p.kb.launchRegs[o.Reg]; e != nil && !e.IsLen() {
				return e
			}
		}
	case *ssa.Call:
		if bi, ok := v.Call.Value.(*ssa.Builtin); ok && bi.Name() == "len" && len(v.Call.Args) == 1 {
			return p.lenSym(v.Call.Args[0])
		}
	case *ssa.BinOp:
		var op byte
		switch v.Op {
		case token.ADD:
			op = '+'
		case token.SUB:
			op = '-'
		case token.MUL:
			op = '*'
		case token.QUO:
			op = '/'
		default:
			return nil
		}
		x, y := p.sym(v.X, depth+1), p.sym(v.Y, depth+1)
		if x == nil || y == nil {
			return nil
		}
		return lf.Op(op, x, y)
	}
	return nil
}

// lenSym returns len(x) as a launch-time expression when x is a kernel's
// slice parameter, or nil.
func (p *factProver) lenSym(x ssa.Value) *lf.Expr {
	prm, ok := x.(*ssa.Parameter)
	if !ok {
		return nil
	}
	a := p.fr.vals[prm]
	if a == nil || len(a.ops) != 3 || a.ops[1].Kind != ir.KReg {
		return nil
	}
	if e := p.kb.launchRegs[a.ops[1].Reg]; e != nil && e.IsLen() {
		return e
	}
	return nil
}

// poly writes v, used in b, as a polynomial over atoms and syms.
func (p *factProver) poly(v ssa.Value, b *ssa.BasicBlock, depth int) ([]mono, bool) {
	if depth > 8 || !isInt(v) {
		return nil, false
	}
	if c, ok := constInt(v); ok {
		return []mono{{c: c}}, true
	}
	if bo, ok := v.(*ssa.BinOp); ok && bo.Op == token.MUL {
		// c·x: the constant is a coefficient, so 8·k needs the fact k ≥ 0.
		x, c := bo.X, bo.Y
		if _, ok := constInt(x); ok {
			x, c = c, x
		}
		if k, ok := constInt(c); ok && k > 0 && k < maxCoef {
			px, ok := p.poly(x, b, depth+1)
			if !ok {
				return nil, false
			}
			for i := range px {
				if math.Abs(float64(px[i].c)*float64(k)) >= maxCoef {
					return nil, false
				}
				px[i].c *= k
			}
			return px, true
		}
	}
	if s := p.sym(v, 0); s != nil {
		return []mono{{c: 1, syms: []*lf.Expr{s}}}, true
	}
	if _, ok := p.guardHi(v, b); ok {
		return []mono{{c: 1, atoms: []ssa.Value{v}}}, true
	}
	if bo, ok := v.(*ssa.BinOp); ok {
		switch bo.Op {
		case token.ADD, token.SUB, token.MUL:
			x, ok1 := p.poly(bo.X, b, depth+1)
			y, ok2 := p.poly(bo.Y, b, depth+1)
			if !ok1 || !ok2 {
				return nil, false
			}
			switch bo.Op {
			case token.ADD:
				return sized(append(x, y...))
			case token.SUB:
				for _, m := range y {
					x = append(x, mono{c: -m.c, atoms: m.atoms, syms: m.syms})
				}
				return sized(x)
			}
			var out []mono
			for _, mx := range x {
				for _, my := range y {
					if math.Abs(float64(mx.c)*float64(my.c)) >= maxCoef {
						return nil, false
					}
					out = append(out, mono{c: mx.c * my.c,
						atoms: append(slices.Clone(mx.atoms), my.atoms...),
						syms:  append(slices.Clone(mx.syms), my.syms...)})
				}
			}
			return sized(out)
		case token.SHL:
			if s, ok := constInt(bo.Y); ok && s >= 0 && s < 20 {
				x, ok := p.poly(bo.X, b, depth+1)
				if !ok {
					return nil, false
				}
				for i := range x {
					x[i].c <<= s
					if math.Abs(float64(x[i].c)) >= maxCoef {
						return nil, false
					}
				}
				return x, true
			}
		}
	}
	return []mono{{c: 1, atoms: []ssa.Value{v}}}, true
}

func sized(ms []mono) ([]mono, bool) { return ms, len(ms) <= maxMonos }

// atomHi bounds the atom a, used in b, above, when it is also ≥ 0 there,
// and says whether the bound is a guard's; the facts it rests on go to
// p.facts.
func (p *factProver) atomHi(a ssa.Value, b *ssa.BasicBlock) (hi *lf.Expr, byGuard, ok bool) {
	r := p.fr.ranges.rangeAt(a, b)
	nonNeg := r.ok && r.lo >= 0
	if bo, ok := a.(*ssa.BinOp); ok && bo.Op == token.QUO && !nonNeg {
		// x / E with x ≥ 0 and E ≥ 1 is ≥ 0.
		if e := p.sym(bo.Y, 0); e != nil {
			if xr := p.fr.ranges.rangeAt(bo.X, b); xr.ok && xr.lo >= 0 {
				p.needPositive(e)
				nonNeg = true
			}
		}
	}
	if !nonNeg {
		return nil, false, false
	}
	if hi, ok := p.guardHi(a, b); ok && r.ok && r.hi < 1<<40 {
		return hi, true, true // r.hi < 2⁴⁰: a scaled guard s·a < E does not wrap
	}
	if r.hi <= smallAtom {
		return lf.Const(r.hi), p.directiveThread(a), true
	}
	if bo, ok := a.(*ssa.BinOp); ok && bo.Op == token.REM {
		// x % E with x ≥ 0 (so the result is) and E ≥ 1 is at most E−1.
		if e := p.sym(bo.Y, 0); e != nil {
			p.needPositive(e)
			return lf.Op('-', e, lf.Const(1)), false, true
		}
	}
	return nil, false, false
}

// directiveThread reports whether a is a field of ThreadIdx() in a
// dimension the block= directive sizes: the directive states the extent
// such an index spans (thread k takes element k), as a guard on launch
// values does, so an access by it may take a fact (len(hist) ≥ 256 under
// block=256).
func (p *factProver) directiveThread(a ssa.Value) bool {
	f, ok := a.(*ssa.Field)
	if !ok || f.Field > 2 || p.kb.k.Block == [3]int{} || p.kb.k.Block[f.Field] <= 1 {
		return false
	}
	call, ok := f.X.(*ssa.Call)
	if !ok || call.Call.StaticCallee() == nil {
		return false
	}
	name, ok := gpuIntrinsicName(call.Call.StaticCallee())
	return ok && name == "Thread.ThreadIdx"
}

// needPositive adds the fact e ≥ 1 unless e is a positive constant.
func (p *factProver) needPositive(e *lf.Expr) {
	if c, ok := e.IsConst(); ok && c >= 1 {
		return
	}
	p.facts = append(p.facts, lf.GE(e, lf.Const(1)))
}

// guardHi is the upper bound a dominating branch puts on v in b: v < E,
// v ≤ E or s·v < E for a sym E (the nearest such branch).
func (p *factProver) guardHi(v ssa.Value, b *ssa.BasicBlock) (*lf.Expr, bool) {
	edges := dominatingEdges(b)
	ds := make([]*ssa.BasicBlock, 0, len(edges))
	for d := range edges {
		ds = append(ds, d)
	}
	// Nearest first, by dominator-tree depth; deterministic.
	slices.SortFunc(ds, func(x, y *ssa.BasicBlock) int { return domDepth(y) - domDepth(x) })
	for _, d := range ds {
		cmp, ok := d.Instrs[len(d.Instrs)-1].(*ssa.If).Cond.(*ssa.BinOp)
		if !ok {
			continue
		}
		op := cmp.Op
		if edges[d] == 1 {
			op = negate(op)
		}
		x, y := cmp.X, cmp.Y
		switch op {
		case token.GTR:
			x, y, op = y, x, token.LSS
		case token.GEQ:
			x, y, op = y, x, token.LEQ
		case token.LSS, token.LEQ:
		default:
			continue
		}
		s := scaleOf(x, v)
		if s == 0 {
			continue
		}
		e := p.sym(y, 0)
		if e == nil {
			continue
		}
		if op == token.LEQ {
			if s == 1 {
				return e, true
			}
			return lf.Op('/', e, lf.Const(s)), true
		}
		if s == 1 {
			// v < E with v and E multiples of 2ᵗ: v ≤ E − 2ᵗ.
			t := min(p.fr.align.tzAt(v, b), p.fr.align.tzAt(y, b), 20)
			return lf.Op('-', e, lf.Const(1<<t)), true
		}
		return lf.Op('/', lf.Op('-', e, lf.Const(1)), lf.Const(s)), true
	}
	return nil, false
}

// scaleOf is s when x is v, v·s, s·v or v<<log2(s) for a constant s ≥ 1;
// 0 otherwise.
func scaleOf(x, v ssa.Value) int64 {
	if x == v {
		return 1
	}
	bo, ok := x.(*ssa.BinOp)
	if !ok {
		return 0
	}
	switch bo.Op {
	case token.MUL:
		if c, ok := constInt(bo.Y); ok && bo.X == v && c >= 1 && c < maxCoef {
			return c
		}
		if c, ok := constInt(bo.X); ok && bo.Y == v && c >= 1 && c < maxCoef {
			return c
		}
	case token.SHL:
		if c, ok := constInt(bo.Y); ok && bo.X == v && c >= 0 && c < 20 {
			return 1 << c
		}
	}
	return 0
}

func domDepth(b *ssa.BasicBlock) int {
	n := 0
	for d := b.Idom(); d != nil; d = d.Idom() {
		n++
	}
	return n
}
