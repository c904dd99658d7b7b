package compiler

// Constant offsets of shared-tile indices, pulled outermost (32-bit
// entries).
//
// MatMul32 stores its loads at `as[r*32 + tx]`, r = ty + 8·i in unrolled
// copy i. The row r is also a guard's and a global index's operand, so it
// is computed once per copy, and ptxas multiplies it by 32 and adds tx
// again in every copy (sm_90: LEA and SHF per copy) where `ty*32 + tx`
// plus 256·i would be one register and an immediate offset in each STS.
// ptxas does not regroup it (nor in the 64-bit entry), so the lowering
// does: an index built from +, −, and · or << by constants is emitted as
// its non-constant terms plus one constant, the subexpressions that hold
// no constant reused as lowered.
//
// Exact: +, − and · wrap mod 2⁶⁴ in Go and PTX alike, so the regrouped
// sum is the index bit for bit, and a checked access reports the same
// index. Only for indices that go only into shared tiles (narrowadd.go
// sharedIndex), in a 32-bit entry (in the 64-bit entries it would move
// every kernel's shared addressing, and so its registers; not measured).

import (
	"go/token"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// maxLinDepth bounds the expression regrouped.
const maxLinDepth = 8

// sharedLinear lowers in, the index of a shared-tile access, as terms
// plus a constant, or returns nil when it has no constant to pull out.
func (kb *kernelBuilder) sharedLinear(fr *frame, in *ssa.BinOp, st ir.Type) *val {
	if !kb.idx32 || st != ir.S64 && st != ir.U64 || !sharedIndexTop(in) || !sharedIndex(in, 0) {
		return nil
	}
	e, c, ok := kb.linSplit(fr, in, 0)
	if !ok || c == 0 {
		return nil
	}
	if e.Kind == ir.KImm {
		return nil // a constant: foldBinOp's case
	}
	r := kb.b.New(st)
	kb.b.Arith(ir.OpAdd, st, r, e, ir.Imm(st, c))
	if kb.linOf == nil {
		kb.linOf = map[ir.Reg]linIndex{}
	}
	kb.linOf[r] = linIndex{e, c}
	return &val{ops: []ir.Operand{ir.R(r)}, origin: -1}
}

// linIndex is a shared-tile index e + c, c a constant.
type linIndex struct {
	e ir.Operand
	c uint64
}

// sharedAddr returns the address of element i of the shared tile x as
// (base + c·size) + e·size when sharedLinear emitted i as e + c: the
// constant then reaches ptxas as an offset of the tile's address, which
// it folds into the LDS/STS (an add and a shift per access on sm_90
// otherwise: ptxas does not distribute the scaling over the add).
func (kb *kernelBuilder) sharedAddr(x *val, i ir.Operand, size int64) (ir.Operand, bool) {
	if x.space != ir.Shared || i.Kind != ir.KReg {
		return ir.Operand{}, false
	}
	l, ok := kb.linOf[i.Reg]
	if !ok {
		return ir.Operand{}, false
	}
	return kb.addOffset(kb.addOffset(x.ops[0], ir.Imm(ir.S64, l.c), size), l.e, size), true
}

// sharedIndexTop reports whether in indexes a shared tile directly.
func sharedIndexTop(in *ssa.BinOp) bool {
	for _, r := range *in.Referrers() {
		if ia, ok := r.(*ssa.IndexAddr); ok && ia.Index == in && isSharedTile(ia.X) {
			return true
		}
	}
	return false
}

// linTerms splits v, an operand already lowered, into e + c, c a
// constant: e is emitted, or is v's value when v holds no constant term.
// ok is false when v is not a 64-bit integer.
func (kb *kernelBuilder) linTerms(fr *frame, v ssa.Value, depth int) (ir.Operand, uint64, bool) {
	t := scalarType(v.Type())
	if t != ir.S64 && t != ir.U64 {
		return ir.Operand{}, 0, false
	}
	x := kb.value(fr, v)
	if len(x.ops) != 1 {
		return ir.Operand{}, 0, false
	}
	op := x.ops[0]
	if op.Kind == ir.KImm {
		return ir.Imm(ir.S64, 0), op.Imm, true
	}
	b, isBin := v.(*ssa.BinOp)
	if !isBin || depth >= maxLinDepth {
		return op, 0, true
	}
	e, c, ok := kb.linSplit(fr, b, depth)
	if !ok || c == 0 {
		return op, 0, true
	}
	return e, c, true
}

// linSplit is linTerms for the binary operation b, which need not be
// lowered yet (the index being lowered): c is 0 (and e invalid) when b
// has no constant term to pull out.
func (kb *kernelBuilder) linSplit(fr *frame, b *ssa.BinOp, depth int) (ir.Operand, uint64, bool) {
	none := ir.Operand{}
	switch b.Op {
	case token.ADD, token.SUB:
		ex, cx, ok1 := kb.linTerms(fr, b.X, depth+1)
		ey, cy, ok2 := kb.linTerms(fr, b.Y, depth+1)
		if !ok1 || !ok2 || cx == 0 && cy == 0 {
			return none, 0, ok1 && ok2
		}
		if b.Op == token.ADD {
			return kb.add64(ex, ey), cx + cy, true
		}
		return kb.sub64(ex, ey), cx - cy, true
	case token.MUL, token.SHL:
		var k uint64
		var other ssa.Value
		if b.Op == token.SHL {
			n, ok := constInt(b.Y)
			if !ok || n < 0 || n > 62 {
				return none, 0, true
			}
			k, other = 1<<uint(n), b.X
		} else if y := kb.value(fr, b.Y).ops[0]; y.Kind == ir.KImm {
			k, other = y.Imm, b.X
		} else if x := kb.value(fr, b.X).ops[0]; x.Kind == ir.KImm {
			k, other = x.Imm, b.Y
		} else {
			return none, 0, true
		}
		e, c, ok := kb.linTerms(fr, other, depth+1)
		if !ok || c == 0 {
			return none, 0, ok
		}
		return kb.mul64(e, ir.Imm(ir.S64, k)), c * k, true
	}
	return none, 0, true
}
