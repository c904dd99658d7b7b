package compiler

// Constant folding of integer arithmetic and comparisons whose operands
// are both immediates. go/ssa folds constant expressions itself; these
// arise in lowering, from unrolled loop counters.

import (
	"go/token"

	"github.com/gokern/kern/compiler/ir"
)

// foldBinOp folds x op y for integer types, or returns nil.
func foldBinOp(op token.Token, st ir.Type, x, y ir.Operand) *val {
	if x.Kind != ir.KImm || y.Kind != ir.KImm || st.IsFloat() || st == ir.Pred || st == ir.Invalid {
		return nil
	}
	a, b := int64(signExtend(x.Imm, st)), int64(signExtend(y.Imm, st))
	ua, ub := x.Imm, y.Imm
	signed := st.IsSigned()
	boolean := func(v bool) *val {
		o := ir.Imm(ir.Pred, 0)
		if v {
			o.Imm = 1
		}
		return &val{ops: []ir.Operand{o}, origin: -1}
	}
	var r uint64
	switch op {
	case token.ADD:
		r = ua + ub
	case token.SUB:
		r = ua - ub
	case token.MUL:
		r = ua * ub
	case token.AND:
		r = ua & ub
	case token.OR:
		r = ua | ub
	case token.XOR:
		r = ua ^ ub
	case token.EQL:
		return boolean(a == b)
	case token.NEQ:
		return boolean(a != b)
	case token.LSS:
		if signed {
			return boolean(a < b)
		}
		return boolean(mask(ua, st) < mask(ub, st))
	case token.LEQ:
		if signed {
			return boolean(a <= b)
		}
		return boolean(mask(ua, st) <= mask(ub, st))
	case token.GTR:
		if signed {
			return boolean(a > b)
		}
		return boolean(mask(ua, st) > mask(ub, st))
	case token.GEQ:
		if signed {
			return boolean(a >= b)
		}
		return boolean(mask(ua, st) >= mask(ub, st))
	default:
		return nil
	}
	return &val{ops: []ir.Operand{ir.Imm(st.RegType(), signExtend(r, st))}, origin: -1}
}

func mask(v uint64, t ir.Type) uint64 {
	if t.Bits() >= 64 {
		return v
	}
	return v & (1<<t.Bits() - 1)
}
