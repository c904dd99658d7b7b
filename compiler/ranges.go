package compiler

// Range analysis over go/ssa, for bounds-check elimination (bounds.go).
//
// rangeAt(v, b) bounds the value of v wherever it is used in block b. It
// is computed on demand from v's definition and then narrowed by the facts
// that hold on entry to b:
//
//   - a comparison on a branch whose taken edge dominates b (`if i < n`,
//     the early return `if i >= n { return }`, a loop's condition);
//   - a slice expression x[lo:hi] or index x[i] whose block strictly
//     dominates b: it either passed its check or was proven, so its
//     operands are in range (0 ≤ lo ≤ hi ≤ MaxLen, 0 ≤ i < MaxLen), and a
//     value equal to the new slice's length is in [0, MaxLen].
//
// Sources of bounds: constants, small integer types, gpu thread and block
// indices (bounded by the kernel's block= shape, which launch enforces per
// dimension, or else by the device limits every GPU shares), len of a
// gpu.Shared array, the launch limits on buffer sizes (maxLen), and
// the result of a call to a helper with one result, bounded from the
// helper's body with its parameters bounded by the call's arguments
// (callee: gpu/tile's swizzle of a chunk and a row stays a chunk).
// Loop-carried phis are solved by checking a candidate interval for
// inductiveness: assume it, evaluate the incoming values, and accept it
// if they fall inside; a counter with constant start and step also keeps
// its residue, so `for k := 0; k < 32; k += 8` is known to stop at 24.

import (
	"go/constant"
	"go/token"
	"go/types"
	"math"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// maxLen bounds the length of every slice a kernel sees: buffers are
// allocations in a 49-bit device address space (48 bits of host address
// space in native mode), so no slice has 2⁴⁸ elements.
const maxLen = 1 << 48

// rangeCtx is the analysis of one function activation.
type rangeCtx struct {
	fn *ssa.Function
	// block is the kernel's block= shape ([0 0 0]: none).
	block [3]int
	// arg bounds a helper's parameter from its call: a constant argument,
	// or the constant length of a gpu.Shared array passed in.
	arg    func(p *ssa.Parameter) interval
	argLen func(p *ssa.Parameter) interval
	// argSlot bounds flattened slot off of a struct parameter: a field
	// of a struct argument held in registers (regrange.go).
	argSlot func(p *ssa.Parameter, off int) interval
	// promoted lists the locals kept in registers whose loads are
	// bounded by their stores (cells; nil: none), regrange.go.
	promoted map[*ssa.Alloc]bool
	cells    map[cellKey]interval
	stores   map[*ssa.Alloc][]cellStore
	// nest counts the helper calls whose results this analysis is
	// bounding (callee), which stops recursion.
	nest int
	// assumed holds the candidate intervals of phis being solved.
	assumed map[*ssa.Phi]interval
	memo    map[rangeKey]interval
	phis    map[*ssa.Phi]interval
	// facts lists, per value, the intervals established by the checked
	// operations of the blocks that define them.
	facts map[ssa.Value][]fact
	// lenMax bounds every slice's length and grid the grid per dimension:
	// maxLen and gridDim, or the tighter limits of a 32-bit entry
	// (index32.go).
	lenMax int64
	grid   [3]int64
	idx32  bool
}

type rangeKey struct {
	v ssa.Value
	b *ssa.BasicBlock
}

type fact struct {
	in *ssa.BasicBlock
	r  interval
}

// depth limits how many comparisons deep the narrowing of an operand of
// a comparison goes, which also cuts cycles between two compared values.
const rangeDepth = 3

func newRangeCtx(fn *ssa.Function, block [3]int, idx32 bool) *rangeCtx {
	rc := &rangeCtx{fn: fn, block: block, assumed: map[*ssa.Phi]interval{}, memo: map[rangeKey]interval{},
		phis: map[*ssa.Phi]interval{}, facts: map[ssa.Value][]fact{},
		arg:     func(*ssa.Parameter) interval { return unknown },
		argLen:  func(*ssa.Parameter) interval { return unknown },
		argSlot: func(*ssa.Parameter, int) interval { return unknown },
		cells:   map[cellKey]interval{}, stores: map[*ssa.Alloc][]cellStore{},
		lenMax: maxLen, grid: gridDim, idx32: idx32}
	if idx32 {
		rc.lenMax, rc.grid = idx32Len, idx32Grid(rc.blockDim(0))
	}
	maxLen := rc.lenMax
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			switch in := instr.(type) {
			case *ssa.Slice:
				if in.Low != nil {
					rc.addFact(in.Low, b, span(0, maxLen))
				}
				if in.High != nil {
					rc.addFact(in.High, b, span(0, maxLen))
				}
				if n := symLen(in); n != nil {
					rc.addFact(n, b, span(0, maxLen))
				}
			case *ssa.IndexAddr:
				rc.addFact(in.Index, b, span(0, maxLen-1))
			}
		}
	}
	return rc
}

func (rc *rangeCtx) addFact(v ssa.Value, b *ssa.BasicBlock, r interval) {
	if _, ok := v.(*ssa.Const); ok {
		return
	}
	rc.facts[v] = append(rc.facts[v], fact{b, r})
}

// rangeAt bounds v as used in block b.
func (rc *rangeCtx) rangeAt(v ssa.Value, b *ssa.BasicBlock) interval {
	return rc.at(v, b, rangeDepth)
}

func (rc *rangeCtx) at(v ssa.Value, b *ssa.BasicBlock, depth int) interval {
	t := scalarType(v.Type())
	if t == ir.Invalid || t == ir.Pred || t.IsFloat() {
		return unknown
	}
	cache := len(rc.assumed) == 0 && depth == rangeDepth
	k := rangeKey{v, b}
	if cache {
		if r, ok := rc.memo[k]; ok {
			return r
		}
	}
	r := fit(rc.def(v, b, depth), t).meet(typeRange(t))
	r = r.meet(rc.narrow(v, b, depth))
	r = rc.stride(v, r)
	if cache {
		rc.memo[k] = r
	}
	return r
}

// narrow is what the facts and comparisons that hold in b say about v.
func (rc *rangeCtx) narrow(v ssa.Value, b *ssa.BasicBlock, depth int) interval {
	r := unknown
	for _, f := range rc.facts[v] {
		if f.in != b && f.in.Dominates(b) {
			r = r.meet(f.r)
		}
	}
	if depth == 0 {
		return r
	}
	for d, succ := range dominatingEdges(b) {
		r = r.meet(rc.branchFact(v, d, succ, depth))
	}
	return r
}

// branchFact is what taking successor succ of d's If says about v, when
// the condition compares v with another value.
func (rc *rangeCtx) branchFact(v ssa.Value, d *ssa.BasicBlock, succ, depth int) interval {
	cmp, ok := d.Instrs[len(d.Instrs)-1].(*ssa.If).Cond.(*ssa.BinOp)
	if !ok {
		return unknown
	}
	op := cmp.Op
	if succ == 1 {
		op = negate(op)
	}
	var other ssa.Value
	switch {
	case cmp.X == v:
		other = cmp.Y
	case cmp.Y == v:
		other, op = cmp.X, mirror(op)
	default:
		return unknown
	}
	o := rc.at(other, d, depth-1)
	if !o.ok {
		return unknown
	}
	switch op {
	case token.LSS:
		return interval{math.MinInt64, o.hi - 1, o.hi > math.MinInt64}
	case token.LEQ:
		return interval{math.MinInt64, o.hi, true}
	case token.GTR:
		return interval{o.lo + 1, math.MaxInt64, o.lo < math.MaxInt64}
	case token.GEQ:
		return interval{o.lo, math.MaxInt64, true}
	case token.EQL:
		return o
	}
	return unknown
}

// edgeFact is what the edge from pred to succ says about v: the rotated
// loops go/ssa builds for range-over-int test the incremented counter at
// the bottom, so the value on the back edge passed that test.
func (rc *rangeCtx) edgeFact(v ssa.Value, pred, succ *ssa.BasicBlock) interval {
	if _, ok := pred.Instrs[len(pred.Instrs)-1].(*ssa.If); !ok || pred.Succs[0] == pred.Succs[1] {
		return unknown
	}
	for i, s := range pred.Succs {
		if s == succ {
			return rc.branchFact(v, pred, i, rangeDepth)
		}
	}
	return unknown
}

// dominatingEdges maps each block ending in an If whose successor
// dominates b, and is entered only from that If, to that successor's
// index: the branch condition (or its negation, for index 1) holds in b.
func dominatingEdges(b *ssa.BasicBlock) map[*ssa.BasicBlock]int {
	out := map[*ssa.BasicBlock]int{}
	for d := b.Idom(); d != nil; d = d.Idom() {
		if _, ok := d.Instrs[len(d.Instrs)-1].(*ssa.If); !ok {
			continue
		}
		for i, s := range d.Succs {
			if len(s.Preds) == 1 && s.Dominates(b) && d.Succs[0] != d.Succs[1] {
				out[d] = i
			}
		}
	}
	return out
}

func negate(op token.Token) token.Token {
	switch op {
	case token.LSS:
		return token.GEQ
	case token.LEQ:
		return token.GTR
	case token.GTR:
		return token.LEQ
	case token.GEQ:
		return token.LSS
	case token.EQL:
		return token.NEQ
	case token.NEQ:
		return token.EQL
	}
	return token.ILLEGAL
}

// mirror swaps a comparison's operands: x < y is y > x.
func mirror(op token.Token) token.Token {
	switch op {
	case token.LSS:
		return token.GTR
	case token.LEQ:
		return token.GEQ
	case token.GTR:
		return token.LSS
	case token.GEQ:
		return token.LEQ
	}
	return op
}

// def bounds v from its definition, its operands taken as used in b.
func (rc *rangeCtx) def(v ssa.Value, b *ssa.BasicBlock, depth int) interval {
	switch v := v.(type) {
	case *ssa.Const:
		if v.Value == nil {
			return exactly(0)
		}
		if c, ok := constant.Int64Val(constant.ToInt(v.Value)); ok {
			return exactly(c)
		}
	case *ssa.Parameter:
		return rc.arg(v)
	case *ssa.BinOp:
		return rc.binop(v, b, depth)
	case *ssa.UnOp:
		switch v.Op {
		case token.SUB:
			return negI(rc.at(v.X, b, depth))
		case token.XOR:
			return subI(negI(rc.at(v.X, b, depth)), exactly(1))
		case token.MUL:
			return rc.cellLoad(v.X)
		}
	case *ssa.Convert:
		from := scalarType(v.X.Type())
		if from == ir.Invalid || from.IsFloat() || from == ir.Pred {
			return unknown
		}
		return rc.at(v.X, b, depth)
	case *ssa.Phi:
		return rc.phi(v)
	case *ssa.Field:
		if p, off, ok := paramField(v); ok {
			return rc.argSlot(p, off)
		}
		return rc.dimField(v)
	case *ssa.Call:
		return rc.call(v, b, depth)
	}
	return unknown
}

func (rc *rangeCtx) binop(v *ssa.BinOp, b *ssa.BasicBlock, depth int) interval {
	x, y := rc.at(v.X, b, depth), rc.at(v.Y, b, depth)
	switch v.Op {
	case token.ADD:
		return addI(x, y)
	case token.SUB:
		return subI(x, y)
	case token.MUL:
		return mulI(x, y)
	case token.QUO:
		return quoI(x, y)
	case token.REM:
		return remI(x, y)
	case token.AND:
		return andI(x, y)
	case token.OR, token.XOR:
		return orI(x, y)
	case token.AND_NOT:
		return andI(x, unknown)
	case token.SHL:
		return shlI(x, y)
	case token.SHR:
		return shrI(x, y)
	}
	return unknown
}

// dimField bounds a field of ThreadIdx(), BlockIdx(), BlockDim() or
// GridDim().
func (rc *rangeCtx) dimField(v *ssa.Field) interval {
	call, ok := v.X.(*ssa.Call)
	if !ok || call.Call.StaticCallee() == nil {
		return unknown
	}
	name, ok := gpuIntrinsicName(call.Call.StaticCallee())
	if !ok || v.Field > 2 {
		return unknown
	}
	switch name {
	case "Thread.ThreadIdx":
		return span(0, rc.blockDim(v.Field)-1)
	case "Thread.BlockDim":
		return span(1, rc.blockDim(v.Field))
	case "Thread.BlockIdx":
		return span(0, rc.grid[v.Field]-1)
	case "Thread.GridDim":
		return span(1, rc.grid[v.Field])
	}
	return unknown
}

// paramField resolves a chain of field reads rooted at a parameter
// (p.a.b) to the parameter and the flattened slot it reads.
func paramField(v *ssa.Field) (*ssa.Parameter, int, bool) {
	st, ok := v.X.Type().Underlying().(*types.Struct)
	if !ok || isThread(v.X.Type()) {
		return nil, 0, false
	}
	off := flatOffset(st, v.Field)
	switch x := v.X.(type) {
	case *ssa.Parameter:
		return x, off, true
	case *ssa.Field:
		p, base, ok := paramField(x)
		return p, base + off, ok
	}
	return nil, 0, false
}

// gridDim is the largest grid every supported GPU allows (compute
// capability 7.0 and later), per dimension.
var gridDim = [3]int64{1<<31 - 1, 65535, 65535}

// blockDim is the largest block extent in dimension d: the block=
// directive's (launch rejects larger blocks per dimension) or the device
// limits (1024, 1024, 64, at most 1024 threads in all).
func (rc *rangeCtx) blockDim(d int) int64 {
	if rc.block != [3]int{} {
		return int64(max(rc.block[d], 1))
	}
	return [3]int64{1024, 1024, 64}[d]
}

func (rc *rangeCtx) threads() int64 {
	if rc.block != [3]int{} {
		return rc.blockDim(0) * rc.blockDim(1) * rc.blockDim(2)
	}
	return 1024
}

func (rc *rangeCtx) call(v *ssa.Call, b *ssa.BasicBlock, depth int) interval {
	if bi, ok := v.Call.Value.(*ssa.Builtin); ok {
		switch bi.Name() {
		case "len":
			return rc.lenAt(v.Call.Args[0], b, depth)
		case "cap":
			// Not lenAt: a re-slice's capacity runs to its parent's end.
			return span(0, rc.lenMax)
		case "min", "max":
			r := rc.at(v.Call.Args[0], b, depth)
			for _, a := range v.Call.Args[1:] {
				o := rc.at(a, b, depth)
				if !r.ok || !o.ok {
					return unknown
				}
				if bi.Name() == "min" {
					r = span(min(r.lo, o.lo), min(r.hi, o.hi))
				} else {
					r = span(max(r.lo, o.lo), max(r.hi, o.hi))
				}
			}
			return r
		}
		return unknown
	}
	fn := v.Call.StaticCallee()
	if fn == nil {
		return unknown
	}
	name, intrinsic := gpuIntrinsicName(fn)
	if !intrinsic {
		return rc.callee(v, fn, b, depth)
	}
	switch name {
	case "Thread.GlobalX", "Thread.GlobalY", "Thread.GlobalZ":
		d := int(name[len(name)-1] - 'X')
		return span(0, rc.grid[d]*rc.blockDim(d)-1)
	case "Thread.LinearIdx":
		return span(0, rc.threads()-1)
	case "Thread.Lane":
		return span(0, 31)
	case "Thread.Warp":
		return span(0, (rc.threads()-1)/32)
	}
	return unknown
}

// lenAt bounds len(s) as used in block b.
func (rc *rangeCtx) lenAt(s ssa.Value, b *ssa.BasicBlock, depth int) interval {
	all := span(0, rc.lenMax)
	// A pointer to an array, a parameter's too, has the array's length.
	if p, ok := s.Type().Underlying().(*types.Pointer); ok {
		if a, ok := p.Elem().Underlying().(*types.Array); ok {
			return exactly(a.Len())
		}
	}
	switch s := s.(type) {
	case *ssa.Call:
		if fn := s.Call.StaticCallee(); fn != nil {
			if name, _ := gpuIntrinsicName(fn); name == "Shared" && len(s.Call.Args) == 2 {
				return rc.at(s.Call.Args[1], b, depth).meet(all)
			}
		}
	case *ssa.Slice:
		if n := symLen(s); n != nil {
			return rc.at(n, b, depth).meet(all)
		}
		lo := exactly(0)
		if s.Low != nil {
			lo = rc.at(s.Low, b, depth)
		}
		hi := rc.lenAt(s.X, b, depth)
		if s.High != nil {
			hi = rc.at(s.High, b, depth)
		}
		return subI(hi, lo).meet(all)
	case *ssa.Parameter:
		return rc.argLen(s).meet(all)
	}
	return all
}

// symLen returns a value equal to len(s) for the re-slice idioms
// x[a:a+n] (n) and x[r*n:(r+1)*n] (n), or nil. In both the difference is
// n in wrapping arithmetic, and a slice's length is in [0, 2⁶³), so it is
// n exactly.
func symLen(s *ssa.Slice) ssa.Value {
	if s.High == nil || scalarType(s.High.Type()).Bits() != 64 {
		return nil // narrower index types wrap at 2³² or less, below maxLen
	}
	if s.Low == nil || isZero(s.Low) {
		return s.High
	}
	hi, ok := s.High.(*ssa.BinOp)
	if !ok {
		return nil
	}
	switch hi.Op {
	case token.ADD:
		if hi.X == s.Low {
			return hi.Y
		}
		if hi.Y == s.Low {
			return hi.X
		}
	case token.MUL:
		lo, ok := s.Low.(*ssa.BinOp)
		if !ok || lo.Op != token.MUL {
			return nil
		}
		// (r+1)*n and r*n, either operand order.
		for _, hp := range [2][2]ssa.Value{{hi.X, hi.Y}, {hi.Y, hi.X}} {
			for _, lp := range [2][2]ssa.Value{{lo.X, lo.Y}, {lo.Y, lo.X}} {
				if hp[1] == lp[1] && isPlusOne(hp[0], lp[0]) {
					return hp[1]
				}
			}
		}
	}
	return nil
}

func isZero(v ssa.Value) bool {
	c, ok := v.(*ssa.Const)
	return ok && c.Value != nil && constant.Sign(c.Value) == 0
}

// isPlusOne reports whether a is r+1 (or 1+r).
func isPlusOne(a, r ssa.Value) bool {
	b, ok := a.(*ssa.BinOp)
	if !ok || b.Op != token.ADD {
		return false
	}
	one := func(v ssa.Value) bool {
		c, ok := v.(*ssa.Const)
		return ok && c.Value != nil && constant.Compare(c.Value, token.EQL, constant.MakeInt64(1))
	}
	return b.X == r && one(b.Y) || b.Y == r && one(b.X)
}

// phi solves a φ-node: the join of its incoming values, where those on
// back edges (from blocks the φ's block dominates) are evaluated under a
// candidate interval for the φ itself. The first candidate that the back
// edges stay inside is inductive, so it holds on every iteration.
func (rc *rangeCtx) phi(p *ssa.Phi) interval {
	if r, ok := rc.assumed[p]; ok {
		return r
	}
	if r, ok := rc.phis[p]; ok {
		return r
	}
	t := scalarType(p.Type())
	init := interval{}
	first := true
	var back []int
	for i, e := range p.Edges {
		pred := p.Block().Preds[i]
		if p.Block().Dominates(pred) {
			back = append(back, i)
			continue
		}
		r := rc.at(e, pred, rangeDepth).meet(rc.edgeFact(e, pred, p.Block()))
		if first {
			init, first = r, false
		} else {
			init = init.join(r)
		}
	}
	result := typeRange(t)
	if !first && init.ok {
		if len(back) == 0 {
			result = init
		}
		tr := typeRange(t)
		// Candidates: no change; counting up or down within the
		// indices a kernel can use (leaving room for the step past the
		// last iteration, so that adding it does not wrap); anywhere up
		// or down.
		const far = 4 * maxLen
		cands := []interval{init, span(init.lo, far), span(-far, init.hi), {init.lo, tr.hi, tr.ok}, {tr.lo, init.hi, tr.ok}}
		for _, cand := range cands {
			if len(back) == 0 || !cand.ok {
				break
			}
			rc.assumed[p] = cand
			r := init
			for _, i := range back {
				pred := p.Block().Preds[i]
				r = r.join(rc.at(p.Edges[i], pred, rangeDepth).meet(rc.edgeFact(p.Edges[i], pred, p.Block())))
			}
			delete(rc.assumed, p)
			if r.within(cand) {
				result = r
				break
			}
		}
	}
	if len(rc.assumed) == 0 {
		rc.phis[p] = result
	}
	return result
}

// stride rounds r in to the values a counter φ with a constant start and
// constant steps can take: p ≡ start (mod gcd of the steps). Only a solved
// (so non-wrapping) counter qualifies.
func (rc *rangeCtx) stride(v ssa.Value, r interval) interval {
	p, ok := v.(*ssa.Phi)
	if !ok || !r.ok {
		return r
	}
	if tr := typeRange(scalarType(p.Type())); !tr.ok || rc.phi(p) == tr || r.lo < -maxLen || r.hi > maxLen {
		return r
	}
	var m, rem int64
	haveRem := false
	for i, e := range p.Edges {
		if p.Block().Dominates(p.Block().Preds[i]) {
			b, ok := e.(*ssa.BinOp)
			if !ok || (b.Op != token.ADD && b.Op != token.SUB) {
				return r
			}
			var c ssa.Value
			switch {
			case b.X == p:
				c = b.Y
			case b.Y == p && b.Op == token.ADD:
				c = b.X
			default:
				return r
			}
			k, ok := constInt(c)
			if !ok || k == 0 || k == math.MinInt64 {
				return r
			}
			m = gcd(m, max(k, -k))
			continue
		}
		k, ok := constInt(e)
		if !ok {
			return r
		}
		if haveRem && k != rem {
			m = gcd(m, max(k-rem, rem-k))
		}
		rem, haveRem = k, true
	}
	if m <= 1 || !haveRem {
		return r
	}
	res := ((rem % m) + m) % m
	lo := r.lo + ((res-r.lo)%m+m)%m
	hi := r.hi - ((r.hi-res)%m+m)%m
	if lo > hi {
		return r
	}
	return span(lo, hi)
}

func constInt(v ssa.Value) (int64, bool) {
	c, ok := v.(*ssa.Const)
	if !ok || c.Value == nil {
		return 0, false
	}
	return constant.Int64Val(constant.ToInt(c.Value))
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// maxNest bounds how many helper calls deep callee looks.
const maxNest = 2

// callee bounds the result of a call to a helper with one result (such
// as gpu/tile's swizzle, swz(r, ch) = ch ^ (r>>1&3)): the join over the
// helper's returns of the returned value, its parameters bounded by the
// call's arguments as used in b. A helper with free variables, or one
// nested too deep, is unknown.
func (rc *rangeCtx) callee(v *ssa.Call, fn *ssa.Function, b *ssa.BasicBlock, depth int) interval {
	if depth == 0 || rc.nest >= maxNest || fn.Signature.Results().Len() != 1 || len(fn.FreeVars) > 0 ||
		len(fn.Blocks) == 0 || len(fn.Params) != len(v.Call.Args) {
		return unknown
	}
	sub := newRangeCtx(fn, rc.block, rc.idx32)
	sub.nest = rc.nest + 1
	sub.arg = func(p *ssa.Parameter) interval {
		for i, q := range fn.Params {
			if q == p {
				return rc.at(v.Call.Args[i], b, depth-1)
			}
		}
		return unknown
	}
	r, first := unknown, true
	for _, blk := range fn.Blocks {
		ret, ok := blk.Instrs[len(blk.Instrs)-1].(*ssa.Return)
		if !ok {
			continue
		}
		x := sub.rangeAt(ret.Results[0], blk)
		if !x.ok {
			return unknown
		}
		if first {
			r, first = x, false
		} else {
			r = r.join(x)
		}
	}
	return r
}
