package emu

// Comparison and selection: setp, set, selp, slct (PTX ISA §9.7.7).

import (
	"math"
	"math/bits"
)

// cmpFunc compares two operands of the instruction type.
type cmpFunc func(a, b uint64) bool

// compare returns the comparison op on type t (PTX ISA §9.7.7.1, Tables
// "Operators for signed/unsigned/bit-size integer types" and "Floating
// point comparison operators"). Unordered float forms (equ, ltu, ...) are
// true when either operand is NaN; the ordered ones and ne are false.
func compare(op string, t dtype, ftz bool) (cmpFunc, bool) {
	if t.isFloat() {
		get := floatReader(t, ftz)
		if get == nil {
			return nil, false
		}
		ord := func(f func(x, y float64) bool) cmpFunc {
			return func(a, b uint64) bool { return f(get(a), get(b)) }
		}
		unord := func(f func(x, y float64) bool) cmpFunc {
			return func(a, b uint64) bool {
				x, y := get(a), get(b)
				return math.IsNaN(x) || math.IsNaN(y) || f(x, y)
			}
		}
		switch op {
		case "eq":
			return ord(func(x, y float64) bool { return x == y }), true
		case "ne":
			return ord(func(x, y float64) bool { return x != y && !math.IsNaN(x) && !math.IsNaN(y) }), true
		case "lt":
			return ord(func(x, y float64) bool { return x < y }), true
		case "le":
			return ord(func(x, y float64) bool { return x <= y }), true
		case "gt":
			return ord(func(x, y float64) bool { return x > y }), true
		case "ge":
			return ord(func(x, y float64) bool { return x >= y }), true
		case "equ":
			return unord(func(x, y float64) bool { return x == y }), true
		case "neu":
			return unord(func(x, y float64) bool { return x != y }), true
		case "ltu":
			return unord(func(x, y float64) bool { return x < y }), true
		case "leu":
			return unord(func(x, y float64) bool { return x <= y }), true
		case "gtu":
			return unord(func(x, y float64) bool { return x > y }), true
		case "geu":
			return unord(func(x, y float64) bool { return x >= y }), true
		case "num":
			return ord(func(x, y float64) bool { return !math.IsNaN(x) && !math.IsNaN(y) }), true
		case "nan":
			return ord(func(x, y float64) bool { return math.IsNaN(x) || math.IsNaN(y) }), true
		}
		return nil, false
	}
	mask := t.mask()
	if t == tPred {
		mask = 1
	}
	sx := t.ext
	u := func(f func(x, y uint64) bool) cmpFunc {
		return func(a, b uint64) bool { return f(a&mask, b&mask) }
	}
	sg := func(f func(x, y int64) bool) cmpFunc {
		return func(a, b uint64) bool { return f(int64(sx(a)), int64(sx(b))) }
	}
	signed := t.isSigned()
	switch op {
	case "eq":
		return u(func(x, y uint64) bool { return x == y }), true
	case "ne":
		return u(func(x, y uint64) bool { return x != y }), true
	case "lo":
		return u(func(x, y uint64) bool { return x < y }), true
	case "ls":
		return u(func(x, y uint64) bool { return x <= y }), true
	case "hi":
		return u(func(x, y uint64) bool { return x > y }), true
	case "hs":
		return u(func(x, y uint64) bool { return x >= y }), true
	case "lt":
		if signed {
			return sg(func(x, y int64) bool { return x < y }), true
		}
		return u(func(x, y uint64) bool { return x < y }), true
	case "le":
		if signed {
			return sg(func(x, y int64) bool { return x <= y }), true
		}
		return u(func(x, y uint64) bool { return x <= y }), true
	case "gt":
		if signed {
			return sg(func(x, y int64) bool { return x > y }), true
		}
		return u(func(x, y uint64) bool { return x > y }), true
	case "ge":
		if signed {
			return sg(func(x, y int64) bool { return x >= y }), true
		}
		return u(func(x, y uint64) bool { return x >= y }), true
	}
	return nil, false
}

var cmpOps = []string{"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
	"equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}

// boolFunc combines a comparison with predicate c (.and/.or/.xor).
func boolFunc(op string) func(x, c bool) bool {
	switch op {
	case "and":
		return func(x, c bool) bool { return x && c }
	case "or":
		return func(x, c bool) bool { return x || c }
	case "xor":
		return func(x, c bool) bool { return x != c }
	}
	return nil
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// decSetp decodes setp.CmpOp{.BoolOp}{.ftz}.type p[|q], a, b{, {!}c}:
// p = cmp(a, b) BoolOp c, q = !cmp(a, b) BoolOp c (PTX ISA §9.7.7.2).
func decSetp(d *decoder, s *astStmt, m *mods, in *inst) {
	op := m.oneOf(cmpOps...)
	bop := m.oneOf("and", "or", "xor")
	t := d.oneType(s, m)
	in.t = t
	n := 3
	if bop != "" {
		n = 4
	}
	if op == "" || !d.want(s, n) {
		if op == "" {
			d.errorf("%s: missing comparison operator", s.op)
		}
		return
	}
	cmp, ok := compare(op, t, m.flags&fFtz != 0)
	if !ok {
		d.errorf("%s: comparison .%s is not defined on .%s", s.op, op, t)
		return
	}
	in.ops[0] = d.dstPair(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	in.ops[2] = d.src(s.args[2], t)
	comb := boolFunc(bop)
	if comb != nil {
		in.ops[3] = d.src(s.args[3], tPred)
	}
	in.fn = func(w *warp, in *inst, m uint32) error {
		p, q := in.ops[0].r, in.ops[0].r2
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			x := cmp(w.get(&in.ops[1], l), w.get(&in.ops[2], l))
			nx := !x
			if comb != nil {
				c := w.get(&in.ops[3], l)&1 != 0
				x, nx = comb(x, c), comb(nx, c)
			}
			w.regs[int(p)+l] = b2u(x)
			if q >= 0 {
				w.regs[int(q)+l] = b2u(nx)
			}
		}
		return nil
	}
}

// decSet decodes set.CmpOp{.BoolOp}{.ftz}.dtype.stype d, a, b{, {!}c}:
// d is all ones (integer dtype) or 1.0 (f32) when true, else 0 (PTX ISA
// §9.7.7.1).
func decSet(d *decoder, s *astStmt, m *mods, in *inst) {
	op := m.oneOf(cmpOps...)
	bop := m.oneOf("and", "or", "xor")
	if len(m.types) != 2 || op == "" {
		d.errorf("%s: want set.CmpOp.dtype.stype", s.op)
		return
	}
	dt, st := m.types[0], m.types[1]
	n := 3
	if bop != "" {
		n = 4
	}
	if !d.want(s, n) {
		return
	}
	if st == tF16x2 || st == tBF16x2 {
		decSetX2(d, s, m, in, op, bop, dt, st)
		return
	}
	cmp, ok := compare(op, st, m.flags&fFtz != 0)
	if !ok {
		d.errorf("%s: comparison .%s is not defined on .%s", s.op, op, st)
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], st)
	in.ops[2] = d.src(s.args[2], st)
	comb := boolFunc(bop)
	if comb != nil {
		in.ops[3] = d.src(s.args[3], tPred)
	}
	one := dt.mask()
	if dt == tF32 {
		one = uint64(math.Float32bits(1))
	}
	in.fn = func(w *warp, in *inst, m uint32) error {
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			x := cmp(w.get(&in.ops[1], l), w.get(&in.ops[2], l))
			if comb != nil {
				x = comb(x, w.get(&in.ops[3], l)&1 != 0)
			}
			var v uint64
			if x {
				v = one
			}
			w.regs[int(in.ops[0].r)+l] = v
		}
		return nil
	}
}

// decSelp decodes selp.type d, a, b, c: d = c ? a : b (PTX ISA §9.7.7.3).
func decSelp(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	in.t = t
	if !d.want(s, 4) {
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	in.ops[2] = d.src(s.args[2], t)
	in.ops[3] = d.src(s.args[3], tPred)
	in.fn = triop(func(a, b, c uint64) uint64 {
		if c&1 != 0 {
			return a
		}
		return b
	})
}

// decSlct decodes slct.dtype.{s32,f32} d, a, b, c: d = c >= 0 ? a : b
// (PTX ISA §9.7.7.4).
func decSlct(d *decoder, s *astStmt, m *mods, in *inst) {
	if len(m.types) != 2 || !d.want(s, 4) {
		d.errorf("%s: want slct.dtype.ctype d, a, b, c", s.op)
		return
	}
	dt, ct := m.types[0], m.types[1]
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], dt)
	in.ops[2] = d.src(s.args[2], dt)
	in.ops[3] = d.src(s.args[3], ct)
	ftz := m.flags&fFtz != 0
	if ct == tF32 {
		in.fn = triop(func(a, b, c uint64) uint64 {
			f := f32(c, ftz)
			if f >= 0 {
				return a
			}
			return b
		})
		return
	}
	in.fn = triop(func(a, b, c uint64) uint64 {
		if int32(c) >= 0 {
			return a
		}
		return b
	})
}

// decSetX2 decodes set on .f16x2/.bf16x2 operands: each half compares on
// its own and sets its half of d to 1.0 (.f16x2/.bf16x2 d) or all ones
// (.u32/.s32 d), else 0 (PTX ISA §9.7.4.5 set, half precision). cuda_fp16
// uses it for __heq2 and friends.
func decSetX2(d *decoder, s *astStmt, m *mods, in *inst, op, bop string, dt, st dtype) {
	half := tF16
	one := uint64(0x3c00)
	if st == tBF16x2 {
		half, one = tBF16, 0x3f80
	}
	if dt != st {
		switch dt {
		case tU32, tS32, tB32:
			one = 0xffff
		default:
			d.errorf("%s: want a .%s, .u32 or .s32 destination", s.op, st)
			return
		}
	}
	cmp, ok := compare(op, half, m.flags&fFtz != 0)
	if !ok || bop != "" {
		d.errorf("%s: comparison .%s is not defined on .%s", s.op, op, st)
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], st)
	in.ops[2] = d.src(s.args[2], st)
	in.fn = binop(func(a, b uint64) uint64 {
		var v uint64
		if cmp(a&0xffff, b&0xffff) {
			v |= one
		}
		if cmp(a>>16&0xffff, b>>16&0xffff) {
			v |= one << 16
		}
		return v
	})
}
