package compiler

// Regrouping a wide sum's int32 terms in a 32-bit entry.
//
// MatMul32's A index `(r0+r)*k + k0 + tx` is, as Go parses it,
// `((r0+r)*k + k0) + tx`. In a 32-bit entry the product may pass 2³¹, so
// it is a mul.wide.s32 and both additions are 64-bit: ptxas folds the
// first into the IMAD.WIDE and pays an add with carry (two SASS) for the
// second, in every unrolled copy. Regrouped as `(r0+r)*k + (k0+tx)`, the
// int32 sum k0+tx is one 32-bit add that every copy shares (the guard
// `k0+tx < k` computes it too), and each copy's index is one IMAD.WIDE.
//
// Exact: when the range analysis bounds a, c and a+c to int32's range,
// a+c computed in 32 bits and extended is a+c, and 64-bit addition wraps
// mod 2⁶⁴ in Go and PTX alike, so p + (a+c) = (p+a) + c for every p. The
// inner sum p+a, used by nothing else, is left unused (ir's dce deletes
// it). Only in a 32-bit entry: elsewhere nothing bounds k0.

import (
	"go/token"
	"math"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// regroupAdd lowers in, (p + a) + c or c + (p + a), as p + (a+c) with a+c
// in 32 bits, or returns nil.
func (kb *kernelBuilder) regroupAdd(fr *frame, in *ssa.BinOp, st ir.Type) *val {
	if !kb.idx32 || fr.ranges == nil || in.Op != token.ADD || st != ir.S64 && st != ir.U64 {
		return nil
	}
	for _, o := range [][2]ssa.Value{{in.X, in.Y}, {in.Y, in.X}} {
		t, ok := o[0].(*ssa.BinOp)
		if !ok || t.Op != token.ADD || !onlyUse(t, in) {
			continue
		}
		c := o[1]
		for _, pa := range [][2]ssa.Value{{t.X, t.Y}, {t.Y, t.X}} {
			p, a := pa[0], pa[1]
			if int32Range(fr, in.Block(), p) || !int32Range(fr, in.Block(), a, c) {
				continue // a narrow p: narrowArith's case
			}
			ra, rc := fr.ranges.rangeAt(a, in.Block()), fr.ranges.rangeAt(c, in.Block())
			lo, hi := ra.lo+rc.lo, ra.hi+rc.hi // no overflow: both in int32's range
			if lo < math.MinInt32 || hi > math.MaxInt32 {
				continue
			}
			av, cv, pv := kb.value(fr, a), kb.value(fr, c), kb.value(fr, p)
			if len(av.ops) != 1 || len(cv.ops) != 1 || len(pv.ops) != 1 {
				return nil
			}
			s32 := kb.b.New(ir.S32)
			kb.b.Arith(ir.OpAdd, ir.S32, s32, kb.low32(av.ops[0], st), kb.low32(cv.ops[0], st))
			s64 := kb.b.New(st)
			if lo >= 0 {
				kb.b.Cvt(ir.U64, ir.U32, "", s64, ir.R(s32))
			} else {
				kb.b.Cvt(ir.S64, ir.S32, "", s64, ir.R(s32))
			}
			r := kb.b.New(st)
			kb.b.Arith(ir.OpAdd, st, r, ir.R(s64), pv.ops[0]) // p may be an immediate
			return &val{ops: []ir.Operand{ir.R(r)}, origin: -1}
		}
	}
	return nil
}
