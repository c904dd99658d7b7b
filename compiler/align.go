package compiler

// Alignment analysis over go/ssa: how many low bits of an integer are
// known to be zero, so that a wider memory access (pack2.go's 32-bit load
// for gpu.PackHalf2(a[i], a[i+1])) can be proved aligned.
//
// tz(v) is a lower bound on the trailing zero bits of v (64 when v is 0).
// It is exact arithmetic modulo 2⁶⁴, so wrap-around keeps it sound:
//
//	tz(x±y) ≥ min(tz x, tz y)   tz(x·y) ≥ tz x + tz y   tz(x<<c) ≥ tz x + c
//	tz(x&y) ≥ max(tz x, tz y)   tz(x|y), tz(x^y) ≥ min  tz(x>>c) ≥ tz x − c
//
// Loop-carried phis are solved as a data-flow problem from the top (every
// value assumed 0 mod 2⁶⁴) down to the greatest fixed point, so the counter
// of `for k0 := 0; k0 < k; k0 += 16` is known to be a multiple of 16.
//
// Facts: a branch whose taken edge dominates the use says that x%2ⁿ == 0
// or x&(2ⁿ−1) == 0 (the early return `if k%16 != 0 { return }` of a kernel
// documented to need k a multiple of 16). A fact holds for the value
// wherever the edge dominates, and values are immutable in SSA, so it is
// applied when evaluating any instruction in such a block.
//
// The alignment of a pointer is carried on its lowered val (val.align):
// a buffer parameter is 256-byte aligned on every device (cuMemAlloc and
// emu allocate so; native mode never sees the wide access), and a
// re-slice x[lo:] is aligned to min(align x, tz(lo)+log2(elem size)).

import (
	"go/constant"
	"go/token"
	"math/bits"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// alignCtx is the alignment analysis of one function activation.
type alignCtx struct {
	tz map[ssa.Value]int
	// params holds what the caller knows of an inlined helper's integer
	// arguments.
	params map[ssa.Value]int
	edges  map[*ssa.BasicBlock]map[*ssa.BasicBlock]int
}

// newAlignCtx solves tz for every integer instruction of fn; argTZ, when
// fn is an inlined helper, is tz of each argument at the call.
func newAlignCtx(fn *ssa.Function, argTZ []int) *alignCtx {
	ac := &alignCtx{tz: map[ssa.Value]int{}, params: map[ssa.Value]int{}, edges: map[*ssa.BasicBlock]map[*ssa.BasicBlock]int{}}
	for i, p := range fn.Params {
		if i < len(argTZ) {
			ac.params[p] = argTZ[i]
		}
	}
	var vals []ssa.Value
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			v, ok := instr.(ssa.Value)
			if !ok || !isIntValue(v) {
				continue
			}
			switch v.(type) {
			case *ssa.BinOp, *ssa.Phi, *ssa.Convert:
				ac.tz[v] = 64
				vals = append(vals, v)
			}
		}
	}
	// Every round can only lower a value, each at most 64 times.
	for changed := true; changed; {
		changed = false
		for _, v := range vals {
			if n := ac.eval(v); n < ac.tz[v] {
				ac.tz[v] = n
				changed = true
			}
		}
	}
	return ac
}

func isIntValue(v ssa.Value) bool {
	t := scalarType(v.Type())
	return t != ir.Invalid && t != ir.Pred && !t.IsFloat()
}

// eval computes tz of v's definition from the current solution.
func (ac *alignCtx) eval(v ssa.Value) int {
	switch v := v.(type) {
	case *ssa.BinOp:
		b := v.Block()
		x, y := ac.at(v.X, b), ac.at(v.Y, b)
		switch v.Op {
		case token.ADD, token.SUB, token.OR, token.XOR:
			return min(x, y)
		case token.MUL:
			return min(x+y, 64)
		case token.AND:
			return max(x, y)
		case token.AND_NOT:
			return x
		case token.SHL:
			if c, ok := constInt(v.Y); ok && c >= 0 {
				return int(min(int64(x)+c, 64))
			}
			return x
		case token.SHR:
			if c, ok := constInt(v.Y); ok && c >= 0 && int64(x) >= c {
				return x - int(c)
			}
		}
		return 0
	case *ssa.Phi:
		n := 64
		for i, e := range v.Edges {
			n = min(n, ac.at(e, v.Block().Preds[i]))
		}
		return n
	case *ssa.Convert:
		if !isIntValue(v.X) {
			return 0
		}
		// Narrowing keeps the low bits; a value of w bits that is 0 mod 2^w
		// is 0.
		x := ac.at(v.X, v.Block())
		if w := 8 * int(memBytes(scalarType(v.Type()))); x >= w {
			return 64
		}
		return x
	}
	return 0
}

// at is tz(v) as used in block b: its solution, or what a constant or a
// dominating branch says.
func (ac *alignCtx) at(v ssa.Value, b *ssa.BasicBlock) int {
	if c, ok := v.(*ssa.Const); ok {
		return constTZ(c)
	}
	n, ok := ac.tz[v]
	if !ok {
		n = ac.params[v]
	}
	return max(n, ac.fact(v, b))
}

// tzAt is the analysis' answer for v used in b (0 without one).
func (ac *alignCtx) tzAt(v ssa.Value, b *ssa.BasicBlock) int {
	if ac == nil {
		if c, ok := v.(*ssa.Const); ok {
			return constTZ(c)
		}
		return 0
	}
	return ac.at(v, b)
}

func constTZ(c *ssa.Const) int {
	if c.Value == nil {
		return 64
	}
	x, ok := constant.Int64Val(constant.ToInt(c.Value))
	if !ok {
		u, ok := constant.Uint64Val(constant.ToInt(c.Value))
		if !ok {
			return 0
		}
		x = int64(u)
	}
	if x == 0 {
		return 64
	}
	return bits.TrailingZeros64(uint64(x))
}

// fact is the largest n such that a branch dominating b established
// v%2ⁿ == 0 or v&(2ⁿ−1) == 0.
func (ac *alignCtx) fact(v ssa.Value, b *ssa.BasicBlock) int {
	if b == nil {
		return 0
	}
	edges, ok := ac.edges[b]
	if !ok {
		edges = dominatingEdges(b)
		ac.edges[b] = edges
	}
	best := 0
	for d, succ := range edges {
		cmp, ok := d.Instrs[len(d.Instrs)-1].(*ssa.If).Cond.(*ssa.BinOp)
		if !ok || (cmp.Op == token.EQL) != (succ == 0) || (cmp.Op != token.EQL && cmp.Op != token.NEQ) {
			continue // the edge taken does not mean "equal"
		}
		lhs, rhs := cmp.X, cmp.Y
		if isZero(lhs) {
			lhs, rhs = rhs, lhs
		}
		if !isZero(rhs) {
			continue
		}
		m, ok := lhs.(*ssa.BinOp)
		if !ok || m.X != v {
			continue
		}
		c, ok := constInt(m.Y)
		if !ok || c <= 0 {
			continue
		}
		switch {
		case m.Op == token.REM && c&(c-1) == 0:
			best = max(best, bits.TrailingZeros64(uint64(c)))
		case m.Op == token.AND && c&(c+1) == 0:
			best = max(best, bits.TrailingZeros64(uint64(c+1)))
		}
	}
	return best
}

// bufferAlign is log2 of the alignment of every buffer a kernel receives.
const bufferAlign = 8

// log2Size is log2 of the largest power of two dividing an element size.
func log2Size(size int64) int {
	if size <= 0 {
		return 0
	}
	return bits.TrailingZeros64(uint64(size))
}
