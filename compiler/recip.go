package compiler

// A float division whose dividend is the constant 1 is PTX's correctly
// rounded reciprocal. rcp.rn.f32 and rcp.rn.f64 (PTX ISA §9.7.3.10,
// §9.7.4.7) are IEEE 754 round-to-nearest-even results of 1/x, subnormal
// inputs and results included without .ftz, exactly what div.rn computes
// for a dividend of 1 and what Go computes for 1/x: the same bits for
// every x (±0 → ±Inf, ±Inf → ±0, NaN → NaN). ptxas expands div.rn.f32 into
// a Newton step with FCHK and a ~95-instruction slow path, rcp.rn.f32 into
// a shorter one (~55 on sm_80/sm_90), which every kernel that divides 1 by
// a value carries once (clang emits rcp.rn for 1.0f/x for the same reason).

import (
	"math"

	"github.com/gokern/kern/compiler/ir"
)

// isFloatOne reports whether o is an immediate equal to 1 (as an f32 or
// an f64 bit pattern, whichever its type says).
func isFloatOne(o ir.Operand) bool {
	if o.Kind != ir.KImm {
		return false
	}
	switch o.Type {
	case ir.F32:
		return math.Float32frombits(uint32(o.Imm)) == 1
	case ir.F64:
		return math.Float64frombits(o.Imm) == 1
	}
	return false
}

// reciprocal lowers 1/b of float type st as rcp.rn into a new register,
// reporting false (emitting nothing) when a is not the constant 1 or st
// is not f32 or f64.
func (kb *kernelBuilder) reciprocal(st ir.Type, a, b ir.Operand) (ir.Reg, bool) {
	if (st != ir.F32 && st != ir.F64) || !isFloatOne(a) {
		return 0, false
	}
	r := kb.b.New(st)
	kb.b.Math(ir.OpRcp, "rn", st, r, b)
	return r, true
}
