package compiler

// (x±1)·y after x·y: a slice of a row, s[r*cols : (r+1)*cols], computes
// both products, and ptxas does not see that the second is the first plus
// cols (a 64-bit multiply is an IMAD.WIDE.U32 and two IMADs, plus the
// 64-bit add of 1 before it, where the sum is one add with carry). Integer
// +, − and · wrap in Go and in PTX alike, so (x±1)·y = x·y ± y holds for
// every value, in every width: the rewrite is exact.

import (
	"go/token"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// distributedMul lowers in = (x±1)·y or y·(x±1) as x·y ± y when x·y is
// already lowered earlier in in's block, reporting false
// (emitting nothing) otherwise.
func (kb *kernelBuilder) distributedMul(fr *frame, in *ssa.BinOp, st ir.Type) (ir.Reg, bool) {
	if in.Op != token.MUL || st.IsFloat() || st.Bits() < 32 {
		return 0, false
	}
	for _, o := range [][2]ssa.Value{{in.X, in.Y}, {in.Y, in.X}} {
		sum, ok := o[0].(*ssa.BinOp)
		if !ok || sum.Op != token.ADD && sum.Op != token.SUB {
			continue
		}
		if k, isConst := constInt(sum.Y); !isConst || k != 1 {
			continue
		}
		y := o[1]
		prod, yv := kb.loweredProduct(fr, in, sum.X, y), fr.vals[y]
		if prod == nil || yv == nil || len(prod.ops) != 1 || len(yv.ops) != 1 {
			continue
		}
		op := ir.OpAdd
		if sum.Op == token.SUB {
			op = ir.OpSub
		}
		r := kb.b.New(st)
		kb.b.Arith(op, st, r, prod.ops[0], yv.ops[0])
		kb.normalize(st, r)
		return r, true
	}
	return 0, false
}

// loweredProduct returns the lowered value of a product x·y (either
// order) other than in, computed before it in its block, or nil. Only in
// the same block: from a dominating block the product stays live into a
// conditional one, which took ops/internal/mm's Simple* kernels (B's rows
// kc and kc+1 under `if kc+1 < k`) from 56 to 60 registers on sm_90
// (ptxas 13.5), past issue 8's +4.
func (kb *kernelBuilder) loweredProduct(fr *frame, in *ssa.BinOp, x, y ssa.Value) *val {
	// Walked in order up to in: an unrolled copy lowers the block again,
	// and fr.vals of a product after in would be the previous copy's.
	for _, i := range in.Block().Instrs {
		if i == in {
			return nil
		}
		p, ok := i.(*ssa.BinOp)
		if !ok || p.Op != token.MUL || !(p.X == x && p.Y == y || p.X == y && p.Y == x) {
			continue
		}
		if v := fr.vals[p]; v != nil {
			return v
		}
	}
	return nil
}
