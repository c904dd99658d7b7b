package emu

// Integer arithmetic, logic, shifts and bit manipulation (PTX ISA §9.7.1
// integer arithmetic, §9.7.8 logic and shift). Values of a w-bit type
// live in the low w bits of a 64-bit register slot; handlers read through
// the type (ext) and write results masked to their width.

import (
	"math"
	"math/bits"
)

// decArith decodes add/sub/mul/mad/fma/div/rem/abs/neg/min/max, routing
// float types to exec_float.go.
func decArith(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	in.t = t
	if t.isFloat() {
		decFloatArith(d, s, m, in)
		return
	}
	op := m.base
	if (op == "add" || op == "sub" || op == "mad") && containsWord(s.op, "cc") {
		decCarry(d, s, m, in, op, false)
		return
	}
	if m.word("hi") {
		m.flags |= fHi
	}
	if m.word("lo") && op != "mul" && op != "mad" {
		d.errorf("%s: .lo applies to mul and mad", s.op)
		return
	}
	nargs := map[string]int{"abs": 2, "neg": 2, "mad": 4, "fma": 4}[op]
	if nargs == 0 {
		nargs = 3
	}
	if !d.want(s, nargs) {
		return
	}
	if op == "fma" {
		d.errorf("fma: integer types are not allowed")
		return
	}
	if m.word("cc") || m.word("relu") {
		d.errorf("%s: carry and relu forms are not supported here", s.op)
		return
	}
	srcT := t
	if m.flags&fWide != 0 && (op == "mul" || op == "mad") {
		if t.size() > 4 {
			d.errorf("%s: .wide needs a 16- or 32-bit type", s.op)
			return
		}
	}
	in.ops[0] = d.dst(s.args[0])
	for i := 1; i < nargs; i++ {
		ot := srcT
		if op == "mad" && i == 3 && m.flags&fWide != 0 {
			ot = wideOf(t)
		}
		in.ops[i] = d.src(s.args[i], ot)
	}
	mask := t.mask()
	sx := t.ext
	signed := t.isSigned()
	nb := uint(t.bits())
	sat := m.flags&fSat != 0
	if sat && (t != tS32 || (op != "add" && op != "sub" && op != "mad")) {
		d.errorf("%s: .sat is only allowed on s32 add, sub and mad.hi", s.op)
		return
	}
	switch op {
	case "add":
		if sat {
			in.fn = binop(func(a, b uint64) uint64 { return satS32(int64(int32(a)) + int64(int32(b))) })
			return
		}
		in.fn = binop(func(a, b uint64) uint64 { return (a + b) & mask })
	case "sub":
		if sat {
			in.fn = binop(func(a, b uint64) uint64 { return satS32(int64(int32(a)) - int64(int32(b))) })
			return
		}
		in.fn = binop(func(a, b uint64) uint64 { return (a - b) & mask })
	case "mul":
		switch {
		case m.flags&fWide != 0:
			wm := wideOf(t).mask()
			in.fn = binop(func(a, b uint64) uint64 { return (sx(a) * sx(b)) & wm })
		case m.flags&fHi != 0:
			in.fn = binop(func(a, b uint64) uint64 { return mulHi(sx(a), sx(b), nb, signed) & mask })
		default:
			in.fn = binop(func(a, b uint64) uint64 { return (a * b) & mask })
		}
	case "mad":
		switch {
		case m.flags&fWide != 0:
			wm := wideOf(t).mask()
			in.fn = triop(func(a, b, c uint64) uint64 { return (sx(a)*sx(b) + c) & wm })
		case m.flags&fHi != 0 && sat:
			in.fn = triop(func(a, b, c uint64) uint64 {
				return satS32(int64(int32(mulHi(sx(a), sx(b), 32, true))) + int64(int32(c)))
			})
		case m.flags&fHi != 0:
			in.fn = triop(func(a, b, c uint64) uint64 { return (mulHi(sx(a), sx(b), nb, signed) + c) & mask })
		default:
			in.fn = triop(func(a, b, c uint64) uint64 { return (a*b + c) & mask })
		}
	case "div":
		if signed {
			in.fn = binop(func(a, b uint64) uint64 {
				x, y := int64(sx(a)), int64(sx(b))
				if y == 0 {
					return mask // PTX leaves division by zero unspecified; GPUs give all ones
				}
				if y == -1 {
					return uint64(-x) & mask
				}
				return uint64(x/y) & mask
			})
		} else {
			in.fn = binop(func(a, b uint64) uint64 {
				if b&mask == 0 {
					return mask
				}
				return (a & mask) / (b & mask)
			})
		}
	case "rem":
		if signed {
			in.fn = binop(func(a, b uint64) uint64 {
				x, y := int64(sx(a)), int64(sx(b))
				if y == 0 {
					return a & mask // unspecified by PTX; emu returns the dividend
				}
				if y == -1 {
					return 0
				}
				return uint64(x%y) & mask
			})
		} else {
			in.fn = binop(func(a, b uint64) uint64 {
				if b&mask == 0 {
					return a & mask
				}
				return (a & mask) % (b & mask)
			})
		}
	case "abs":
		if !signed {
			d.errorf("abs: want a signed type")
			return
		}
		in.fn = unop(func(a uint64) uint64 {
			x := int64(sx(a))
			if x < 0 {
				x = -x
			}
			return uint64(x) & mask
		})
	case "neg":
		in.fn = unop(func(a uint64) uint64 { return -a & mask })
	case "min", "max":
		isMax := op == "max"
		in.fn = binop(func(a, b uint64) uint64 {
			var less bool
			if signed {
				less = int64(sx(a)) < int64(sx(b))
			} else {
				less = a&mask < b&mask
			}
			if less != isMax {
				return a & mask
			}
			return b & mask
		})
	}
}

// wideOf is the double-width type of a 16- or 32-bit integer type.
func wideOf(t dtype) dtype {
	switch t {
	case tU16:
		return tU32
	case tS16:
		return tS32
	case tU32:
		return tU64
	case tS32:
		return tS64
	}
	return t
}

func satS32(v int64) uint64 {
	v = min(max(v, math.MinInt32), math.MaxInt32)
	return uint64(uint32(int32(v)))
}

// mulHi returns the high n bits of the 2n-bit product of a and b (already
// extended to 64 bits).
func mulHi(a, b uint64, n uint, signed bool) uint64 {
	if n < 64 {
		return (a * b) >> n // the 2n-bit product fits in 64 bits, sign included
	}
	hi, _ := bits.Mul64(a, b)
	if signed {
		// Signed high part from the unsigned one (Hacker's Delight 8-3).
		if int64(a) < 0 {
			hi -= b
		}
		if int64(b) < 0 {
			hi -= a
		}
	}
	return hi
}

// decLogic decodes and/or/xor/not/cnot, including the .pred forms.
func decLogic(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	in.t = t
	unary := m.base == "not" || m.base == "cnot"
	n := 3
	if unary {
		n = 2
	}
	if !d.want(s, n) {
		return
	}
	if t.isFloat() || t.isSigned() {
		d.errorf("%s: want a .b or .pred type", s.op)
		return
	}
	in.ops[0] = d.dst(s.args[0])
	for i := 1; i < n; i++ {
		in.ops[i] = d.src(s.args[i], t)
	}
	mask := t.mask()
	if t == tPred {
		mask = 1
	}
	switch m.base {
	case "and":
		in.fn = binop(func(a, b uint64) uint64 { return a & b & mask })
	case "or":
		in.fn = binop(func(a, b uint64) uint64 { return (a | b) & mask })
	case "xor":
		in.fn = binop(func(a, b uint64) uint64 { return (a ^ b) & mask })
	case "not":
		in.fn = unop(func(a uint64) uint64 { return ^a & mask })
	case "cnot":
		in.fn = unop(func(a uint64) uint64 {
			if a&mask == 0 {
				return 1
			}
			return 0
		})
	}
}

// decShift decodes shl/shr. The shift amount is an unsigned 32-bit value;
// amounts at or above the width clamp to it: shl and shr.u give 0, shr.s
// fills with the sign bit (PTX ISA §9.7.8.8, §9.7.8.9).
func decShift(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	in.t = t
	if !d.want(s, 3) {
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	in.ops[2] = d.src(s.args[2], tU32)
	mask := t.mask()
	nb := uint64(t.bits())
	sx := t.ext
	switch {
	case m.base == "shl":
		in.fn = binop(func(a, b uint64) uint64 {
			n := min(uint64(uint32(b)), nb)
			if n >= 64 {
				return 0
			}
			return (a << n) & mask
		})
	case t.isSigned():
		in.fn = binop(func(a, b uint64) uint64 {
			n := min(uint64(uint32(b)), nb)
			return uint64(int64(sx(a))>>min(n, 63)) & mask
		})
	default:
		in.fn = binop(func(a, b uint64) uint64 {
			n := min(uint64(uint32(b)), nb)
			if n >= 64 {
				return 0
			}
			return (a & mask) >> n
		})
	}
}

// decShf decodes the funnel shift shf.{l,r}.{clamp,wrap}.b32 (PTX ISA
// §9.7.8.7).
func decShf(d *decoder, s *astStmt, m *mods, in *inst) {
	dir := m.oneOf("l", "r")
	mode := m.oneOf("clamp", "wrap")
	if dir == "" || mode == "" || !d.want(s, 4) {
		d.errorf("%s: want shf.{l,r}.{clamp,wrap}.b32 d, a, b, c", s.op)
		return
	}
	in.t = d.oneType(s, m)
	in.ops[0] = d.dst(s.args[0])
	for i := 1; i < 4; i++ {
		in.ops[i] = d.src(s.args[i], tB32)
	}
	left, clamp := dir == "l", mode == "clamp"
	in.fn = triop(func(a, b, c uint64) uint64 {
		n := uint32(c)
		if clamp {
			n = min(n, 32)
		} else {
			n &= 31
		}
		v := uint64(uint32(b))<<32 | uint64(uint32(a))
		if left {
			return uint64(uint32((v << n) >> 32))
		}
		return uint64(uint32(v >> n))
	})
}

// decBits decodes popc/clz/brev/bfind (PTX ISA §9.7.1.14-§9.7.1.19).
// popc and clz write a .u32 count whatever the source width.
func decBits(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	in.t = t
	if !d.want(s, 2) {
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	mask := t.mask()
	nb := t.bits()
	switch m.base {
	case "popc":
		in.fn = unop(func(a uint64) uint64 { return uint64(bits.OnesCount64(a & mask)) })
	case "clz":
		in.fn = unop(func(a uint64) uint64 { return uint64(bits.LeadingZeros64(a&mask) - (64 - nb)) })
	case "brev":
		in.fn = unop(func(a uint64) uint64 { return bits.Reverse64(a) >> (64 - nb) })
	case "bfind":
		shiftamt := m.word("shiftamt")
		sx := t.ext
		signed := t.isSigned()
		in.fn = unop(func(a uint64) uint64 {
			x := a & mask
			if signed && int64(sx(a)) < 0 {
				x = ^x & mask // the most significant non-sign bit
			}
			if x == 0 {
				return 0xffffffff
			}
			pos := uint64(63 - bits.LeadingZeros64(x))
			if shiftamt {
				return uint64(nb-1) - pos
			}
			return pos
		})
	}
}

// decBfe decodes bfe: extract len bits at pos, zero- or sign-extended
// (PTX ISA §9.7.1.20). pos and len are taken modulo 256.
func decBfe(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	in.t = t
	if !d.want(s, 4) {
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	in.ops[2] = d.src(s.args[2], tU32)
	in.ops[3] = d.src(s.args[3], tU32)
	nb := uint64(t.bits())
	mask := t.mask()
	signed := t.isSigned()
	in.fn = triop(func(a, b, c uint64) uint64 {
		pos, ln := b&0xff, c&0xff
		a &= mask
		var sbit uint64
		if signed && ln != 0 {
			msb := min(pos+ln-1, nb-1)
			sbit = a >> msb & 1
		}
		var d uint64
		for i := uint64(0); i < nb; i++ {
			var bit uint64
			if i < ln && pos+i < nb {
				bit = a >> (pos + i) & 1
			} else {
				bit = sbit
			}
			d |= bit << i
		}
		return d
	})
}

// decBfi decodes bfi: insert the low len bits of a into b at pos (PTX ISA
// §9.7.1.21).
func decBfi(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	in.t = t
	if !d.want(s, 5) {
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	in.ops[2] = d.src(s.args[2], t)
	in.ops[3] = d.src(s.args[3], tU32)
	in.ops[4] = d.src(s.args[4], tU32)
	nb := uint64(t.bits())
	in.fn = func(w *warp, in *inst, m uint32) error {
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			a, b := w.get(&in.ops[1], l), w.get(&in.ops[2], l)
			pos, ln := w.get(&in.ops[3], l)&0xff, w.get(&in.ops[4], l)&0xff
			f := b
			for i := uint64(0); i < ln && pos+i < nb; i++ {
				f = f&^(1<<(pos+i)) | (a>>i&1)<<(pos+i)
			}
			w.regs[int(in.ops[0].r)+l] = f & t.mask()
		}
		return nil
	}
}

// decPrmt decodes prmt.b32 with the default and the .f4e/.b4e/.rc8/.ecl/
// .ecr/.rc16 modes (PTX ISA §9.7.8.6).
func decPrmt(d *decoder, s *astStmt, m *mods, in *inst) {
	mode := m.oneOf("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")
	in.t = d.oneType(s, m)
	if !d.want(s, 4) {
		return
	}
	in.ops[0] = d.dst(s.args[0])
	for i := 1; i < 4; i++ {
		in.ops[i] = d.src(s.args[i], tB32)
	}
	in.fn = triop(func(a, b, c uint64) uint64 { return uint64(prmt(uint32(a), uint32(b), uint32(c), mode)) })
}

// decDp4a decodes dp4a.atype.btype d, a, b, c (PTX ISA §9.7.1.23): c plus
// the dot product of the four bytes of a and of b, each signed (.s32) or
// unsigned (.u32); d is .s32 when either type is, wrapping modulo 2³².
func decDp4a(d *decoder, s *astStmt, m *mods, in *inst) {
	if len(m.types) != 2 || !d.want(s, 4) {
		d.errorf("%s: want dp4a.atype.btype d, a, b, c", s.op)
		return
	}
	sa, sb := m.types[0] == tS32, m.types[1] == tS32
	for _, t := range m.types {
		if t != tS32 && t != tU32 {
			d.errorf("%s: dp4a types are .u32 or .s32", s.op)
			return
		}
	}
	in.t = tS32
	in.ops[0] = d.dst(s.args[0])
	for i := 1; i < 4; i++ {
		in.ops[i] = d.src(s.args[i], tB32)
	}
	in.fn = triop(func(a, b, c uint64) uint64 { return uint64(uint32(dp4a(uint32(a), uint32(b), uint32(c), sa, sb))) })
}

// dp4a is c + Σ byte_i(a)·byte_i(b), each byte sign-extended when its
// operand is signed.
func dp4a(a, b, c uint32, sa, sb bool) uint32 {
	for i := range 4 {
		x, y := uint32(uint8(a>>(8*i))), uint32(uint8(b>>(8*i)))
		if sa {
			x = uint32(int32(int8(x)))
		}
		if sb {
			y = uint32(int32(int8(y)))
		}
		c += x * y
	}
	return c
}

func prmt(a, b, c uint32, mode string) uint32 {
	src := uint64(b)<<32 | uint64(a)
	byteAt := func(i uint32) uint32 { return uint32(src>>(8*(i&7))) & 0xff }
	var sel [4]uint32
	switch mode {
	case "":
		var d uint32
		for i := 0; i < 4; i++ {
			s := c >> (4 * i) & 0xf
			v := byteAt(s & 7)
			if s&8 != 0 { // replicate the sign bit
				v = 0
				if byteAt(s&7)&0x80 != 0 {
					v = 0xff
				}
			}
			d |= v << (8 * i)
		}
		return d
	case "f4e":
		n := c & 3
		sel = [4]uint32{n, n + 1, n + 2, n + 3}
	case "b4e":
		n := c & 3
		sel = [4]uint32{(n + 8 - 0) & 7, (n + 7) & 7, (n + 6) & 7, (n + 5) & 7}
	case "rc8":
		n := c & 3
		sel = [4]uint32{n, n, n, n}
	case "ecl":
		n := c & 3
		sel = [4]uint32{n, max(n, 1), max(n, 2), 3}
	case "ecr":
		n := c & 3
		sel = [4]uint32{0, min(n, 1), min(n, 2), n}
	case "rc16":
		n := c & 1
		sel = [4]uint32{2 * n, 2*n + 1, 2 * n, 2*n + 1}
	}
	var d uint32
	for i, s := range sel {
		d |= byteAt(s&7) << (8 * i)
	}
	return d
}
