package compiler

// Lowering of constants, arithmetic, comparisons and conversions with Go's
// semantics: integers wrap at their width (sub-word values are kept
// normalised in 32-bit registers), signed >> is arithmetic, over-wide
// shifts give 0 or the sign, float operations round to nearest even one at
// a time.

import (
	"go/constant"
	"go/token"
	"go/types"
	"math"
	"math/bits"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

func (kb *kernelBuilder) constVal(c *ssa.Const) *val {
	t := c.Type()
	st := scalarType(t)
	if c.Value == nil || st == ir.Invalid {
		return kb.zeroVal(t)
	}
	return &val{ops: []ir.Operand{constOperand(c.Value, st)}, origin: -1}
}

func constOperand(v constant.Value, st ir.Type) ir.Operand {
	switch st {
	case ir.Pred:
		if constant.BoolVal(v) {
			return ir.Imm(ir.Pred, 1)
		}
		return ir.Imm(ir.Pred, 0)
	case ir.F32:
		f, _ := constant.Float32Val(constant.ToFloat(v))
		return ir.Imm(ir.F32, uint64(math.Float32bits(f)))
	case ir.F64:
		f, _ := constant.Float64Val(constant.ToFloat(v))
		return ir.Imm(ir.F64, math.Float64bits(f))
	}
	iv := constant.ToInt(v)
	var bits uint64
	if u, ok := constant.Uint64Val(iv); ok {
		bits = u
	} else if i, ok := constant.Int64Val(iv); ok {
		bits = uint64(i)
	}
	return ir.Imm(st.RegType(), signExtend(bits, st))
}

// normalize re-establishes the invariant that an 8-bit value's 32-bit
// register holds it zero- or sign-extended.
func (kb *kernelBuilder) normalize(st ir.Type, r ir.Reg) {
	switch st {
	case ir.U8:
		kb.b.Cvt(ir.U32, ir.U8, "", r, ir.R(r))
	case ir.S8:
		kb.b.Cvt(ir.S32, ir.S8, "", r, ir.R(r))
	}
}

func (kb *kernelBuilder) lowerBinOp(fr *frame, in *ssa.BinOp) *val {
	x, y := kb.value(fr, in.X), kb.value(fr, in.Y)
	st := scalarType(in.X.Type())
	if st == ir.Invalid || len(x.ops) != 1 {
		kb.d.errorf(in.Pos(), UnsupportedType, "operator %s on %s is not supported in kernels", in.Op, typeName(in.X.Type()))
		return kb.zeroVal(in.Type())
	}
	a, b := x.ops[0], y.ops[0]
	if v := foldBinOp(in.Op, st, a, b); v != nil {
		return v
	}
	switch in.Op {
	case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
		if a32, b32, t32, ok := kb.narrowCompare(fr, in, st, a, b); ok {
			return &val{ops: []ir.Operand{ir.R(kb.compare(in.Op, t32, a32, b32))}, origin: -1}
		}
		return &val{ops: []ir.Operand{ir.R(kb.compare(in.Op, st, a, b))}, origin: -1}
	case token.SHL, token.SHR:
		return kb.shift(in.Op, st, a, b, scalarType(in.Y.Type()))
	}
	if st == ir.Pred {
		kb.d.errorf(in.Pos(), UnsupportedConstruct, "operator %s on bool", in.Op)
		return kb.zeroVal(in.Type())
	}
	op := map[token.Token]ir.Op{token.ADD: ir.OpAdd, token.SUB: ir.OpSub, token.MUL: ir.OpMul,
		token.QUO: ir.OpDiv, token.REM: ir.OpRem, token.AND: ir.OpAnd, token.OR: ir.OpOr, token.XOR: ir.OpXor}[in.Op]
	if op == ir.OpDiv || op == ir.OpRem {
		return kb.lowerDivRem(fr, in, op, st, a, b)
	}
	if op == ir.OpAdd || op == ir.OpSub || op == ir.OpMul {
		if v := kb.sharedLinear(fr, in, st); v != nil {
			return v
		}
		if v := kb.narrowArith(fr, in, op, st, a, b); v != nil {
			return v
		}
		if v := kb.regroupAdd(fr, in, st); v != nil {
			return v
		}
	}
	if r, ok := kb.distributedMul(fr, in, st); ok {
		return &val{ops: []ir.Operand{ir.R(r)}, origin: -1}
	}
	if r, ok := kb.narrowAdd(fr, in, st, a, b); ok {
		return &val{ops: []ir.Operand{r}, origin: -1}
	}
	r := kb.b.New(st)
	if in.Op == token.AND_NOT {
		nb := kb.b.New(st)
		kb.b.Unary(ir.OpNot, st, nb, b)
		kb.b.Arith(ir.OpAnd, st, r, a, ir.R(nb))
		return &val{ops: []ir.Operand{ir.R(r)}, origin: -1}
	}
	if op == ir.OpInvalid {
		kb.d.errorf(in.Pos(), UnsupportedConstruct, "operator %s is not supported in kernels", in.Op)
		return kb.zeroVal(in.Type())
	}
	kb.b.Arith(op, st, r, a, b)
	if op == ir.OpAdd || op == ir.OpSub || op == ir.OpMul {
		kb.normalize(st, r)
	}
	return &val{ops: []ir.Operand{ir.R(r)}, origin: -1}
}

// narrowCompare returns the low halves of a 64-bit integer comparison's
// operands, and the type to compare them as, when the range analysis
// bounds both to [0, 2^32) (unsigned) or, for a signed comparison, to
// int32's range (signed): there the 32-bit comparison of the low halves
// decides the 64-bit one, in one ISETP instead of two (ptxas does not
// drop the high half's compare even when it is of two zeros, as for
// t.Lane() == 0).
func (kb *kernelBuilder) narrowCompare(fr *frame, in *ssa.BinOp, st ir.Type, a, b ir.Operand) (ir.Operand, ir.Operand, ir.Type, bool) {
	if fr.ranges == nil || st.IsFloat() || st.Bits() != 64 {
		return a, b, st, false
	}
	t32 := ir.U32
	for _, v := range []ssa.Value{in.X, in.Y} {
		// A loop's phi stays 64-bit in its own test: ptxas counts trips
		// (and unrolls) only when the counter's update and its test have
		// one width.
		if _, phi := v.(*ssa.Phi); phi {
			return a, b, st, false
		}
		r := fr.ranges.rangeAt(v, in.Block())
		switch {
		case !r.ok:
			return a, b, st, false
		case r.lo >= 0 && r.hi <= math.MaxUint32:
		case kb.idx32 && st == ir.S64 && r.lo >= math.MinInt32 && r.hi <= math.MaxInt32:
			t32 = ir.S32
		default:
			return a, b, st, false
		}
	}
	if t32 == ir.S32 {
		// Both in int32's range: the one in [0, 2^32) too.
		for _, v := range []ssa.Value{in.X, in.Y} {
			if r := fr.ranges.rangeAt(v, in.Block()); r.hi > math.MaxInt32 {
				return a, b, st, false
			}
		}
	}
	return kb.low32(a, st), kb.low32(b, st), t32, true
}

// low32 is the low half of a 64-bit integer operand.
func (kb *kernelBuilder) low32(o ir.Operand, st ir.Type) ir.Operand {
	if o.Kind == ir.KImm {
		return ir.Imm(ir.U32, o.Imm&math.MaxUint32)
	}
	r := kb.b.New(ir.U32)
	kb.b.Cvt(ir.U32, ir.U64, "", r, ir.R(kb.reg(o, st)))
	return ir.R(r)
}

// int32Range reports whether the range analysis bounds each of vs to
// int32's range in block b.
func int32Range(fr *frame, b *ssa.BasicBlock, vs ...ssa.Value) bool {
	for _, v := range vs {
		if r := fr.ranges.rangeAt(v, b); !r.ok || r.lo < math.MinInt32 || r.hi > math.MaxInt32 {
			return false
		}
	}
	return true
}

// narrowArith lowers, in a 32-bit entry, a 64-bit integer sum,
// difference or product whose operands and result the range analysis
// bounds to int32's range as the 32-bit operation of the low halves,
// extended (with zeros when the result cannot be negative, so the high
// half is a known 0 to ptxas). Its 32-bit uses (narrowCompare, another
// narrowArith, a division) take the low half back, and ptxas drops the
// extension they do not need. A product of two int32 values whose
// result may not fit is one mul.wide.s32 (PTX ISA §9.7.1.6): exact in 64
// bits, and with an add one IMAD.WIDE, where a 64-bit multiply is three
// IMADs and an add. nil when neither applies.
func (kb *kernelBuilder) narrowArith(fr *frame, in *ssa.BinOp, op ir.Op, st ir.Type, a, b ir.Operand) *val {
	// A loop counter's update stays 64-bit, as its test does
	// (narrowCompare): ptxas counts trips, and unrolls, only when the
	// two have one width.
	for _, u := range *in.Referrers() {
		if _, phi := u.(*ssa.Phi); phi {
			return nil
		}
	}
	if sharedIndex(in, 0) {
		return nil // narrowadd.go: ptxas folds a shared index's constants in 64 bits only
	}
	return kb.narrowArithAt(fr, in, in.Block(), op, st, a, b)
}

// narrowArithAt is narrowArith for in computed in block blk (a hoisted
// loop's entry, for the invariant terms hoist_lower.go recomputes there),
// its operands and result bounded as used in blk.
func (kb *kernelBuilder) narrowArithAt(fr *frame, in *ssa.BinOp, blk *ssa.BasicBlock, op ir.Op, st ir.Type, a, b ir.Operand) *val {
	if !kb.idx32 || fr.ranges == nil || st != ir.S64 && st != ir.U64 || !int32Range(fr, blk, in.X, in.Y) {
		return nil
	}
	r := kb.b.New(st)
	if !int32Range(fr, blk, in) {
		if op != ir.OpMul || a.Kind == ir.KImm || b.Kind == ir.KImm {
			return nil
		}
		kb.b.MulWide(ir.S32, r, kb.low32(a, st), kb.low32(b, st))
		return &val{ops: []ir.Operand{ir.R(r)}, origin: -1}
	}
	lo := kb.b.New(ir.S32)
	kb.b.Arith(op, ir.S32, lo, kb.low32(a, st), kb.low32(b, st))
	if fr.ranges.rangeAt(in, blk).lo >= 0 {
		kb.b.Cvt(ir.U64, ir.U32, "", r, ir.R(lo))
	} else {
		kb.b.Cvt(ir.S64, ir.S32, "", r, ir.R(lo))
	}
	return &val{ops: []ir.Operand{ir.R(r)}, origin: -1}
}

// compare lowers a comparison to a predicate.
func (kb *kernelBuilder) compare(op token.Token, st ir.Type, a, b ir.Operand) ir.Reg {
	p := kb.b.New(ir.Pred)
	if st == ir.Pred {
		pa, pb := kb.reg(a, ir.Pred), kb.reg(b, ir.Pred)
		kb.b.Arith(ir.OpXor, ir.Pred, p, ir.R(pa), ir.R(pb))
		if op == token.EQL {
			q := kb.b.New(ir.Pred)
			kb.b.Unary(ir.OpNot, ir.Pred, q, ir.R(p))
			return q
		}
		return p
	}
	var c ir.Cmp
	switch op {
	case token.EQL:
		c = ir.EQ
	case token.NEQ:
		c = ir.NE
		if st.IsFloat() {
			c = ir.NEU // NaN != NaN is true in Go
		}
	case token.LSS:
		c = ir.LT
	case token.LEQ:
		c = ir.LE
	case token.GTR:
		c = ir.GT
	case token.GEQ:
		c = ir.GE
	}
	if !st.IsFloat() && !st.IsSigned() {
		c = map[ir.Cmp]ir.Cmp{ir.EQ: ir.EQ, ir.NE: ir.NE, ir.LT: ir.LO, ir.LE: "ls", ir.GT: "hi", ir.GE: ir.HS}[c]
	}
	if a.Kind == ir.KImm && b.Kind == ir.KImm {
		a = ir.R(kb.reg(a, st))
	}
	kb.b.Setp(c, st, p, a, b)
	return p
}

// shift lowers << and >>. The amount is clamped to the operand width when
// it may not fit the instruction's 32-bit amount operand.
func (kb *kernelBuilder) shift(op token.Token, st ir.Type, x, amt ir.Operand, at ir.Type) *val {
	width := uint64(st.Bits())
	var a ir.Operand
	switch {
	case amt.Kind == ir.KImm:
		n := signExtend(amt.Imm, at)
		if n > width {
			n = width
		}
		a = ir.Imm(ir.U32, n)
	case at.Bits() == 64:
		c := kb.b.New(ir.U64)
		kb.b.Arith(ir.OpMin, ir.U64, c, amt, ir.Imm(ir.U64, width))
		r := kb.b.New(ir.U32)
		kb.b.Cvt(ir.U32, ir.U64, "", r, ir.R(c))
		a = ir.R(r)
	case at.Bits() == 16:
		r := kb.b.New(ir.U32)
		kb.b.Cvt(ir.U32, ir.U16, "", r, amt)
		a = ir.R(r)
	default:
		a = amt
		if at.IsSigned() && at.Bits() == 8 {
			// A negative 8-bit amount panics in Go; treat it as huge.
			r := kb.b.New(ir.U32)
			kb.b.Arith(ir.OpAnd, ir.U32, r, amt, ir.Imm(ir.U32, 0xff))
			a = ir.R(r)
		}
	}
	if x.Kind == ir.KImm {
		x = ir.R(kb.reg(x, st))
	}
	r := kb.b.New(st)
	if op == token.SHL {
		kb.b.Shift(ir.OpShl, st, r, x, a)
		kb.normalize(st, r)
	} else {
		kb.b.Shift(ir.OpShr, st, r, x, a)
	}
	return &val{ops: []ir.Operand{ir.R(r)}, origin: -1}
}

func (kb *kernelBuilder) lowerUnOp(fr *frame, in *ssa.UnOp) *val {
	if in.Op == token.MUL {
		if v, ok := kb.pairLoad(fr, in); ok {
			return v
		}
		if v, ok := kb.groupLoad(fr, in); ok {
			return v
		}
		p := kb.value(fr, in.X)
		return kb.load(fr, p, in.Type())
	}
	if in.Op == token.ARROW {
		kb.d.errorf(in.Pos(), UnsupportedChannel, "channel receives are not supported in kernels")
		return kb.zeroVal(in.Type())
	}
	x := kb.value(fr, in.X)
	st := scalarType(in.X.Type())
	if st == ir.Invalid {
		kb.d.errorf(in.Pos(), UnsupportedType, "operator %s on %s is not supported in kernels", in.Op, typeName(in.X.Type()))
		return kb.zeroVal(in.Type())
	}
	a := x.ops[0]
	if a.Kind == ir.KImm {
		a = ir.R(kb.reg(a, st))
	}
	r := kb.b.New(st)
	switch in.Op {
	case token.NOT:
		kb.b.Unary(ir.OpNot, ir.Pred, r, a)
	case token.XOR:
		kb.b.Unary(ir.OpNot, st, r, a)
		kb.normalize(st, r)
	case token.SUB:
		if st.IsFloat() {
			kb.b.Math(ir.OpNeg, "", st, r, a)
		} else {
			kb.b.Unary(ir.OpNeg, st.Signed(), r, a)
			kb.normalize(st, r)
		}
	default:
		kb.d.errorf(in.Pos(), UnsupportedConstruct, "operator %s is not supported in kernels", in.Op)
	}
	return &val{ops: []ir.Operand{ir.R(r)}, origin: -1}
}

func (kb *kernelBuilder) lowerConvert(fr *frame, in *ssa.Convert) *val {
	from, to := scalarType(in.X.Type()), scalarType(in.Type())
	if from == ir.Invalid || to == ir.Invalid || from == ir.Pred || to == ir.Pred {
		kb.d.errorf(in.Pos(), UnsupportedType, "conversion from %s to %s is not supported in kernels", typeName(in.X.Type()), typeName(in.Type()))
		return kb.zeroVal(in.Type())
	}
	x := kb.value(fr, in.X).ops[0]
	return &val{ops: []ir.Operand{ir.R(kb.convert(from, to, x))}, origin: -1}
}

// convert converts a scalar between numeric types with Go's rules:
// integers truncate or extend, floats round to nearest, floats to
// integers truncate toward zero (saturating, NaN to 0, where Go leaves the
// result implementation-defined).
func (kb *kernelBuilder) convert(from, to ir.Type, x ir.Operand) ir.Reg {
	if x.Kind == ir.KImm {
		x = ir.R(kb.reg(x, from))
	}
	r := kb.b.New(to)
	// Sub-word sources are already extended in a 32-bit register.
	src := from.RegType()
	switch {
	case from.IsFloat() && to.IsFloat():
		if from == to {
			kb.b.Mov(to, r, x)
		} else if to.Bits() < from.Bits() {
			kb.b.Cvt(to, from, "rn", r, x)
		} else {
			kb.b.Cvt(to, from, "", r, x)
		}
	case from.IsFloat():
		mid := to.RegType()
		if to.Bits() == 8 || to.Bits() == 16 {
			mid = ir.S32
			if !to.IsSigned() {
				mid = ir.U32
			}
		}
		if mid == to.RegType() && to.Bits() >= 32 {
			kb.b.Cvt(mid, from, "rzi", r, x)
		} else {
			t := kb.b.New(mid)
			kb.b.Cvt(mid, from, "rzi", t, x)
			kb.intToInt(mid, to, r, ir.R(t))
		}
	case to.IsFloat():
		kb.b.Cvt(to, src, "rn", r, x)
	default:
		kb.intToInt(src, to, r, x)
	}
	return r
}

// intToInt converts between integer register types into r (of type to).
func (kb *kernelBuilder) intToInt(src, to ir.Type, r ir.Reg, x ir.Operand) {
	switch {
	case to.Bits() == 8:
		// Into 32 bits, then extend the low byte.
		t := x
		if src.Bits() != 32 {
			t32 := kb.b.New(ir.U32)
			kb.b.Cvt(ir.U32, src.Unsigned(), "", t32, x)
			t = ir.R(t32)
		}
		if to.IsSigned() {
			kb.b.Cvt(ir.S32, ir.S8, "", r, t)
		} else {
			kb.b.Cvt(ir.U32, ir.U8, "", r, t)
		}
	case src.Bits() == to.Bits():
		kb.b.Mov(to, r, x)
	default:
		kb.b.Cvt(to, src, "", r, x)
	}
}

func (kb *kernelBuilder) extract(fr *frame, in *ssa.Extract) *val {
	tup := kb.value(fr, in.Tuple)
	tt := in.Tuple.Type().(*types.Tuple)
	off := 0
	for i := 0; i < in.Index; i++ {
		off += flatLen(tt.At(i).Type())
	}
	n := flatLen(in.Type())
	v := *tup
	v.ops = tup.ops[off : off+n]
	return &v
}

func (kb *kernelBuilder) lowerField(fr *frame, in *ssa.Field) *val {
	x := kb.value(fr, in.X)
	st := in.X.Type().Underlying().(*types.Struct)
	off := flatOffset(st, in.Field)
	n := flatLen(in.Type())
	if x.slots != nil {
		sl := x.slots[off : off+n]
		if isPointerLike(in.Type()) {
			return kb.fromSlots(x.ops[off:off+n], sl[0])
		}
		if _, ok := in.Type().Underlying().(*types.Struct); ok {
			return &val{ops: x.ops[off : off+n], origin: -1, slots: sl}
		}
	}
	return &val{ops: x.ops[off : off+n], origin: -1}
}

// lowerIndex lowers an element of an array value. A constant index picks
// registers; a variable one selects with a chain of selp (arrays are
// small) after a bounds check.
func (kb *kernelBuilder) lowerIndex(fr *frame, in *ssa.Index) *val {
	x := kb.value(fr, in.X)
	arr, ok := in.X.Type().Underlying().(*types.Array)
	if !ok {
		kb.d.errorf(in.Pos(), UnsupportedType, "indexing a %s is not supported in kernels", typeName(in.X.Type()))
		return kb.zeroVal(in.Type())
	}
	n := flatLen(arr.Elem())
	idx := kb.value(fr, in.Index).ops[0]
	if idx.Kind == ir.KImm {
		k := int64(signExtend(idx.Imm, scalarType(in.Index.Type())))
		if !kb.constIndexInRange(k, arr.Len(), in.Pos()) {
			return kb.zeroVal(in.Type())
		}
		return &val{ops: x.ops[int(k)*n : int(k)*n+n], origin: -1}
	}
	i64 := kb.index64(idx, in.Index.Type())
	kb.checkBounds(i64, ir.Imm(ir.S64, uint64(arr.Len())), in.Pos())
	fl, _ := flatten(arr.Elem())
	out := &val{origin: -1}
	for j, t := range fl {
		r := kb.b.New(t)
		kb.b.Mov(t, r, x.ops[j])
		for k := 1; k < int(arr.Len()); k++ {
			p := kb.b.New(ir.Pred)
			kb.b.Setp(ir.EQ, ir.S64, p, i64, ir.Imm(ir.S64, uint64(k)))
			kb.b.Selp(t, r, x.ops[k*n+j], ir.R(r), p)
		}
		out.ops = append(out.ops, ir.R(r))
	}
	return out
}

// nonZero reports whether an integer value is provably non-zero: a
// non-zero constant, or x | c with c a non-zero constant.
func nonZero(v ssa.Value) bool {
	switch v := v.(type) {
	case *ssa.Const:
		return v.Value != nil && constant.Sign(v.Value) != 0
	case *ssa.BinOp:
		return v.Op == token.OR && (nonZero(v.X) || nonZero(v.Y))
	}
	return false
}

// lowerDivRem lowers integer / and %. With the operands' ranges known
// (fr.ranges), a divisor that cannot be zero needs no check, a
// non-negative dividend over a power of two is a shift or a mask, and
// 64-bit operands that both fit in 32 bits divide in 32 bits: PTX's 64-bit
// division is a long subroutine, its 32-bit one a short inline sequence.
func (kb *kernelBuilder) lowerDivRem(fr *frame, in *ssa.BinOp, op ir.Op, st ir.Type, a, b ir.Operand) *val {
	if op == ir.OpDiv {
		if r, ok := kb.reciprocal(st, a, b); ok {
			return &val{ops: []ir.Operand{ir.R(r)}, origin: -1}
		}
	}
	var xr, yr interval
	if fr.ranges != nil && !st.IsFloat() {
		xr, yr = fr.ranges.rangeAt(in.X, in.Block()), fr.ranges.rangeAt(in.Y, in.Block())
	}
	if !nonZero(in.Y) && !(yr.ok && (yr.lo > 0 || yr.hi < 0)) {
		kb.checkDivisor(b, st, in.Pos())
	}
	r := kb.b.New(st)
	out := &val{ops: []ir.Operand{ir.R(r)}, origin: -1}
	if kb.divRem32(fr, in, op, st, r, a, b, xr, yr) {
		return out
	}
	if c, ok := constInt(in.Y); ok && xr.ok && xr.lo >= 0 && c > 0 && c&(c-1) == 0 && st.Bits() >= 32 {
		if op == ir.OpDiv {
			sh := 0
			for v := c; v > 1; v >>= 1 {
				sh++
			}
			kb.b.Shift(ir.OpShr, st.Unsigned(), r, ir.R(kb.reg(a, st)), ir.Imm(ir.U32, uint64(sh)))
		} else {
			kb.b.Arith(ir.OpAnd, st, r, ir.R(kb.reg(a, st)), ir.Imm(st, uint64(c-1)))
		}
		return out
	}
	if c, ok := constInt(in.Y); ok && st.IsSigned() && c > 1 && c&(c-1) == 0 && st.Bits() >= 32 {
		kb.signedDivPow2(op, st, r, kb.reg(a, st), c)
		return out
	}
	if q := divPartner(in); op == ir.OpRem && q != nil {
		// x % y after x / y: r = x − (x/y)·y, Go's truncated remainder
		// (also for MinInt / −1, where both wrap), instead of a second
		// division; clang's DivRemPairs does the same.
		if qv := fr.vals[q]; qv != nil && len(qv.ops) == 1 {
			p := kb.b.New(st)
			kb.b.Arith(ir.OpMul, st, p, qv.ops[0], b)
			kb.b.Arith(ir.OpSub, st, r, a, ir.R(p))
			return out
		}
	}
	if st.Bits() == 64 && xr.within(span(0, 1<<32-1)) && yr.within(span(1, 1<<32-1)) {
		x32, y32, q32 := kb.b.New(ir.U32), kb.b.New(ir.U32), kb.b.New(ir.U32)
		kb.b.Cvt(ir.U32, ir.U64, "", x32, ir.R(kb.reg(a, st)))
		kb.b.Cvt(ir.U32, ir.U64, "", y32, ir.R(kb.reg(b, st)))
		kb.b.Arith(op, ir.U32, q32, ir.R(x32), ir.R(y32))
		kb.b.Cvt(st.Unsigned(), ir.U32, "", r, ir.R(q32))
		return out
	}
	kb.b.Arith(op, st, r, a, b)
	return out
}

// divRem32 lowers, in a 32-bit entry, a signed 64-bit x / y or x % y
// whose operands the range analysis bounds to int32's range in 32 bits,
// sign-extended into dst, reporting whether it did: Go's truncated
// division of two int32 values is exact in 32 bits unless it is
// MinInt32 / −1, which the ranges rule out. The divisor's check is
// lowerDivRem's, before.
func (kb *kernelBuilder) divRem32(fr *frame, in *ssa.BinOp, op ir.Op, st ir.Type, dst ir.Reg, a, b ir.Operand, xr, yr interval) bool {
	i32 := span(math.MinInt32, math.MaxInt32)
	if !kb.idx32 || st != ir.S64 || !xr.within(i32) || !yr.within(i32) || xr.lo == math.MinInt32 && yr.lo <= -1 && yr.hi >= -1 {
		return false
	}
	x := kb.reg(kb.low32(a, st), ir.U32)
	r := kb.b.New(ir.S32)
	c, isConst := constInt(in.Y)
	switch {
	case isConst && c > 1 && c&(c-1) == 0 && xr.lo >= 0:
		if op == ir.OpDiv {
			kb.b.Shift(ir.OpShr, ir.U32, r, ir.R(x), ir.Imm(ir.U32, uint64(bits.TrailingZeros64(uint64(c)))))
		} else {
			kb.b.Arith(ir.OpAnd, ir.S32, r, ir.R(x), ir.Imm(ir.S32, uint64(c-1)))
		}
	case isConst && c > 1 && c&(c-1) == 0:
		kb.signedDivPow2(op, ir.S32, r, x, c)
	default:
		y := kb.low32(b, st)
		if q := divPartner(in); op == ir.OpRem && q != nil && fr.vals[q] != nil && len(fr.vals[q].ops) == 1 {
			// x − (x/y)·y, as lowerDivRem does in 64 bits.
			p := kb.b.New(ir.S32)
			kb.b.Arith(ir.OpMul, ir.S32, p, kb.low32(fr.vals[q].ops[0], st), y)
			kb.b.Arith(ir.OpSub, ir.S32, r, ir.R(x), ir.R(p))
		} else {
			kb.b.Arith(op, ir.S32, r, ir.R(x), y)
		}
	}
	kb.b.Cvt(ir.S64, ir.S32, "", dst, ir.R(r))
	return true
}

// signedDivPow2 lowers x / c or x % c for a signed x that may be negative
// and c = 2^sh > 1 without a division (PTX's 64-bit div and rem are
// subroutine calls even for a constant divisor): Go truncates toward zero,
// so a negative x is biased by c−1 before the arithmetic shift,
//
//	bias = (x >> (bits−1)) >>> (bits−sh)   // c−1 if x < 0, else 0
//	x / c = (x + bias) >> sh
//	x % c = x − ((x + bias) & −c)
//
// x + bias cannot overflow: bias is 0 unless x is negative.
func (kb *kernelBuilder) signedDivPow2(op ir.Op, st ir.Type, dst, x ir.Reg, c int64) {
	sh := 0
	for v := c; v > 1; v >>= 1 {
		sh++
	}
	bits := st.Bits()
	sign, bias, t := kb.b.New(st), kb.b.New(st), kb.b.New(st)
	kb.b.Shift(ir.OpShr, st, sign, ir.R(x), ir.Imm(ir.U32, uint64(bits-1)))
	kb.b.Shift(ir.OpShr, st.Unsigned(), bias, ir.R(sign), ir.Imm(ir.U32, uint64(bits-sh)))
	kb.b.Arith(ir.OpAdd, st, t, ir.R(x), ir.R(bias))
	if op == ir.OpDiv {
		kb.b.Shift(ir.OpShr, st, dst, ir.R(t), ir.Imm(ir.U32, uint64(sh)))
		return
	}
	m := kb.b.New(st)
	kb.b.Arith(ir.OpAnd, st, m, ir.R(t), ir.Imm(st, uint64(-c)))
	kb.b.Arith(ir.OpSub, st, dst, ir.R(x), ir.R(m))
}

// divPartner returns the x / y that precedes x % y (in) in its block, with
// the same operands, or nil.
func divPartner(in *ssa.BinOp) *ssa.BinOp {
	for _, i := range in.Block().Instrs {
		if i == in {
			return nil
		}
		if d, ok := i.(*ssa.BinOp); ok && d.Op == token.QUO && d.X == in.X && d.Y == in.Y {
			return d
		}
	}
	return nil
}
