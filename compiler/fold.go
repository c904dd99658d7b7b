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
	case token.QUO, token.REM:
		if b == 0 {
			return nil // the division's own check reports it
		}
		switch {
		case signed && op == token.QUO:
			r = uint64(a / b)
		case signed:
			r = uint64(a % b)
		case op == token.QUO:
			r = mask(ua, st) / mask(ub, st)
		default:
			r = mask(ua, st) % mask(ub, st)
		}
	case token.SHL, token.SHR:
		// Go: counts of the width or more give 0, or the sign for >> of a
		// signed value (the count's own type is unsigned here or a
		// non-negative constant).
		w := uint64(st.Bits())
		switch {
		case op == token.SHL && ub >= w:
			r = 0
		case op == token.SHL:
			r = ua << ub
		case signed && ub >= w:
			r = uint64(a >> 63)
		case signed:
			r = uint64(a >> ub)
		case ub >= w:
			r = 0
		default:
			r = mask(ua, st) >> ub
		}
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
