package emu

// Floating-point arithmetic (PTX ISA §9.7.3 f32/f64, §9.7.4 half
// precision). Results are correctly rounded in the instruction's mode
// (round.go); NaN results are the canonical NaN, as on NVIDIA GPUs.
// .ftz flushes subnormal f32 inputs and results to sign-preserving zero;
// .sat clamps results to [0, 1] with NaN becoming +0.

import (
	"math"
)

const (
	canonNaN32 = 0x7fffffff
	canonNaN64 = 0x7fffffffffffffff
	minNorm32  = 0x1p-126
)

// f32 reads a float32 register value, flushing a subnormal with ftz.
func f32(a uint64, ftz bool) float32 {
	f := math.Float32frombits(uint32(a))
	if ftz && f != 0 && math.Abs(float64(f)) < minNorm32 {
		return float32(math.Copysign(0, float64(f)))
	}
	return f
}

// out32 finishes a float32 result: canonical NaN, then .ftz and .sat.
func out32(f float32, flags iflag) uint64 {
	if f != f {
		if flags&fSat != 0 {
			return 0
		}
		return canonNaN32
	}
	if flags&fFtz != 0 && f != 0 && math.Abs(float64(f)) < minNorm32 {
		f = float32(math.Copysign(0, float64(f)))
	}
	if flags&fSat != 0 {
		f = min(max(f, 0), 1)
	}
	return uint64(math.Float32bits(f))
}

func out64(f float64, flags iflag) uint64 {
	if f != f {
		if flags&fSat != 0 {
			return 0
		}
		return canonNaN64
	}
	if flags&fSat != 0 {
		f = min(max(f, 0), 1)
	}
	return math.Float64bits(f)
}

// floatReader returns a function reading a register of float type t as a
// float64 (exact).
func floatReader(t dtype, ftz bool) func(uint64) float64 {
	switch t {
	case tF32:
		return func(a uint64) float64 { return float64(f32(a, ftz)) }
	case tF64:
		return math.Float64frombits
	case tF16:
		return f16ToF64
	case tBF16:
		return bf16ToF64
	}
	return nil
}

// halfFmt gives the format and lane count of a 16-bit float type.
func halfFmt(t dtype) (ffmt, int, bool) {
	switch t {
	case tF16:
		return fmtF16, 1, true
	case tF16x2:
		return fmtF16, 2, true
	case tBF16:
		return fmtBF16, 1, true
	case tBF16x2:
		return fmtBF16, 2, true
	}
	return ffmt{}, 0, false
}

// halfOp lifts a float64 operation on up to three operands (returning a
// value exact or rounded to odd) to a packed 16-bit float type.
func halfOp(f ffmt, n int, m rmode, flags iflag, op func(x, y, z float64) float64) func(a, b, c uint64) uint64 {
	ftz := flags&fFtz != 0
	minNorm := math.Ldexp(1, 2-1<<(f.exp-1))
	in := func(v uint64) float64 {
		x := widen(uint32(v&0xffff), f)
		if ftz && x != 0 && math.Abs(x) < minNorm {
			return math.Copysign(0, x)
		}
		return x
	}
	return func(a, b, c uint64) uint64 {
		var d uint64
		for i := 0; i < n; i++ {
			sh := uint(16 * i)
			r := op(in(a>>sh), in(b>>sh), in(c>>sh))
			var h uint32
			switch {
			case math.IsNaN(r):
				h = f.qnan
				if flags&fSat != 0 {
					h = 0
				}
			default:
				if flags&fSat != 0 {
					r = min(max(r, 0), 1)
				}
				h = narrowSat(r, f, m, flags&fSatFinite != 0)
				if ftz && h&0x7fff != 0 && math.Abs(widen(h, f)) < minNorm {
					h &= 0x8000
				}
			}
			d |= uint64(h) << sh
		}
		return d
	}
}

// decFloatArith decodes add/sub/mul/fma/mad/div/abs/neg/min/max on float
// types.
func decFloatArith(d *decoder, s *astStmt, m *mods, in *inst) {
	t := in.t
	op := m.base
	nargs := map[string]int{"abs": 2, "neg": 2, "mad": 4, "fma": 4}[op]
	if nargs == 0 {
		nargs = 3
	}
	if !d.want(s, nargs) {
		return
	}
	if m.word("xorsign") || m.word("abs") || m.word("relu") || m.word("oob") {
		d.errorf("%s: this form is not supported", s.op)
		return
	}
	in.ops[0] = d.dst(s.args[0])
	for i := 1; i < nargs; i++ {
		in.ops[i] = d.src(s.args[i], t)
	}
	rm := m.rnd
	flags := m.flags
	if (op == "fma" || op == "div" && t == tF64) && flags&fRndGiven == 0 {
		d.errorf("%s: a rounding modifier (.rn, .rz, .rm, .rp) is required", s.op)
		return
	}
	if op == "div" && t == tF32 && flags&(fRndGiven|fApprox|fFull) == 0 {
		d.errorf("%s: want .approx, .full or a rounding modifier", s.op)
		return
	}
	if f, n, ok := halfFmt(t); ok {
		decHalfArith(d, s, in, op, f, n, rm, flags)
		return
	}
	if t != tF32 && t != tF64 {
		d.errorf("%s: type .%s is not supported", s.op, t)
		return
	}
	ftz := flags&fFtz != 0
	if t == tF32 {
		switch op {
		case "add":
			if rm == rnRN && flags&(fFtz|fSat) == 0 {
				in.fn = binop(func(a, b uint64) uint64 {
					r := math.Float32frombits(uint32(a)) + math.Float32frombits(uint32(b))
					if r != r {
						return canonNaN32
					}
					return uint64(math.Float32bits(r))
				})
				return
			}
			in.fn = binop(func(a, b uint64) uint64 { return out32(add32(f32(a, ftz), f32(b, ftz), rm), flags) })
		case "sub":
			in.fn = binop(func(a, b uint64) uint64 { return out32(add32(f32(a, ftz), -f32(b, ftz), rm), flags) })
		case "mul":
			if rm == rnRN && flags&(fFtz|fSat) == 0 {
				in.fn = binop(func(a, b uint64) uint64 {
					r := math.Float32frombits(uint32(a)) * math.Float32frombits(uint32(b))
					if r != r {
						return canonNaN32
					}
					return uint64(math.Float32bits(r))
				})
				return
			}
			in.fn = binop(func(a, b uint64) uint64 { return out32(mul32(f32(a, ftz), f32(b, ftz), rm), flags) })
		case "fma", "mad":
			in.fn = triop(func(a, b, c uint64) uint64 {
				return out32(fma32(f32(a, ftz), f32(b, ftz), f32(c, ftz), rm), flags)
			})
		case "div":
			switch {
			case flags&fApprox != 0:
				// div.approx.f32 computes a * (1/b) with at most 2 ulp error
				// (PTX ISA §9.7.3.8); emu gives the correctly rounded
				// quotient, and, like the GPU, 0 for |b| in [2^126, 2^128].
				in.fn = binop(func(a, b uint64) uint64 {
					x, y := f32(a, ftz), f32(b, ftz)
					if ay := math.Abs(float64(y)); ay >= 0x1p126 && !math.IsInf(float64(y), 0) {
						return out32(x*0, flags)
					}
					return out32(float32(float64(x)/float64(y)), flags)
				})
			default: // .full (2 ulp) and IEEE .rnd: correctly rounded
				in.fn = binop(func(a, b uint64) uint64 { return out32(div32(f32(a, ftz), f32(b, ftz), rm), flags) })
			}
		case "abs":
			in.fn = unop(func(a uint64) uint64 {
				return uint64(math.Float32bits(f32(a, ftz)) &^ (1 << 31))
			})
		case "neg":
			in.fn = unop(func(a uint64) uint64 {
				return uint64(math.Float32bits(f32(a, ftz)) ^ (1 << 31))
			})
		case "min", "max":
			isMax, nan := op == "max", flags&fNaN != 0
			in.fn = binop(func(a, b uint64) uint64 {
				return out32(float32(fminmax(float64(f32(a, ftz)), float64(f32(b, ftz)), isMax, nan)), flags&^fSat)
			})
		case "rem":
			d.errorf("rem: float types are not allowed")
		}
		return
	}
	// f64
	switch op {
	case "add":
		in.fn = binop(func(a, b uint64) uint64 { return out64(add64(fb(a), fb(b), rm), flags) })
	case "sub":
		in.fn = binop(func(a, b uint64) uint64 { return out64(add64(fb(a), -fb(b), rm), flags) })
	case "mul":
		in.fn = binop(func(a, b uint64) uint64 { return out64(mul64(fb(a), fb(b), rm), flags) })
	case "fma", "mad":
		in.fn = triop(func(a, b, c uint64) uint64 { return out64(fma64(fb(a), fb(b), fb(c), rm), flags) })
	case "div":
		in.fn = binop(func(a, b uint64) uint64 { return out64(div64(fb(a), fb(b), rm), flags) })
	case "abs":
		in.fn = unop(func(a uint64) uint64 { return a &^ (1 << 63) })
	case "neg":
		in.fn = unop(func(a uint64) uint64 { return a ^ (1 << 63) })
	case "min", "max":
		isMax, nan := op == "max", flags&fNaN != 0
		in.fn = binop(func(a, b uint64) uint64 { return out64(fminmax(fb(a), fb(b), isMax, nan), 0) })
	case "rem":
		d.errorf("rem: float types are not allowed")
	}
}

func fb(a uint64) float64 { return math.Float64frombits(a) }

// fminmax is PTX min/max: a NaN operand is ignored unless both are NaN
// (or .NaN is given, which propagates it), and -0 is less than +0.
func fminmax(x, y float64, isMax, nanProp bool) float64 {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn, nanProp && (xn || yn):
		return math.NaN()
	case xn:
		return y
	case yn:
		return x
	}
	if x == y && x == 0 {
		if math.Signbit(x) != isMax {
			return x
		}
		return y
	}
	if (x > y) == isMax {
		return x
	}
	return y
}

func decHalfArith(d *decoder, s *astStmt, in *inst, op string, f ffmt, n int, rm rmode, flags iflag) {
	var fn func(x, y, z float64) float64
	switch op {
	case "add":
		fn = func(x, y, _ float64) float64 { return addOdd(x, y, rm) }
	case "sub":
		fn = func(x, y, _ float64) float64 { return addOdd(x, -y, rm) }
	case "mul":
		fn = func(x, y, _ float64) float64 { return x * y }
	case "fma", "mad":
		fn = func(x, y, z float64) float64 { return fmaOdd(x, y, z, rm) }
	case "min", "max":
		isMax, nan := op == "max", flags&fNaN != 0
		fn = func(x, y, _ float64) float64 { return fminmax(x, y, isMax, nan) }
	case "abs":
		mask := uint64(0x7fff7fff)
		in.fn = unop(func(a uint64) uint64 { return a & mask & (1<<(16*n) - 1) })
		return
	case "neg":
		sign := uint64(0x80008000) & (1<<(16*n) - 1)
		in.fn = unop(func(a uint64) uint64 { return a ^ sign })
		return
	default:
		d.errorf("%s: not supported on 16-bit float types", s.op)
		return
	}
	h := halfOp(f, n, rm, flags, fn)
	in.fn = triop(func(a, b, c uint64) uint64 { return h(a, b, c) })
	if op != "fma" && op != "mad" {
		in.fn = binop(func(a, b uint64) uint64 { return h(a, b, 0) })
	}
}

// decUnaryF decodes rcp, sqrt, rsqrt, ex2, lg2, sin, cos, tanh. The .rnd
// forms of rcp and sqrt are correctly rounded; the .approx forms are
// computed in float64 and rounded once, well within the ISA's error bounds
// (PTX ISA §9.7.3.10-§9.7.3.19), but not bit-identical to a GPU's.
func decUnaryF(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	in.t = t
	if !d.want(s, 2) {
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	op := m.base
	flags := m.flags
	rm := m.rnd
	approx := flags&fApprox != 0
	exact := flags&fRndGiven != 0
	if (op == "rcp" || op == "sqrt") && !approx && !exact {
		d.errorf("%s: want .approx or a rounding modifier", s.op)
		return
	}
	if op != "rcp" && op != "sqrt" && !approx {
		d.errorf("%s: only the .approx form exists", s.op)
		return
	}
	var f func(x float64) float64
	switch op {
	case "rcp":
		f = func(x float64) float64 { return 1 / x }
	case "sqrt":
		f = math.Sqrt
	case "rsqrt":
		f = func(x float64) float64 { return 1 / math.Sqrt(x) }
	case "ex2":
		f = math.Exp2
	case "lg2":
		f = math.Log2
	case "sin":
		f = math.Sin
	case "cos":
		f = math.Cos
	case "tanh":
		f = math.Tanh
	}
	ftz := flags&fFtz != 0
	switch t {
	case tF32:
		if exact {
			if op == "rcp" {
				in.fn = unop(func(a uint64) uint64 { return out32(div32(1, f32(a, ftz), rm), flags) })
			} else {
				in.fn = unop(func(a uint64) uint64 { return out32(sqrt32(f32(a, ftz), rm), flags) })
			}
			return
		}
		if op == "ex2" {
			in.fn = unop(func(a uint64) uint64 { return out32(exp2f32(f32(a, ftz)), flags) })
			return
		}
		in.fn = unop(func(a uint64) uint64 { return out32(float32(f(float64(f32(a, ftz)))), flags) })
	case tF64:
		if exact {
			if op == "rcp" {
				in.fn = unop(func(a uint64) uint64 { return out64(div64(1, fb(a), rm), flags) })
			} else {
				in.fn = unop(func(a uint64) uint64 { return out64(sqrt64(fb(a), rm), flags) })
			}
			return
		}
		if op != "rcp" && op != "rsqrt" && op != "sqrt" {
			d.errorf("%s: .f64 is not allowed", s.op)
			return
		}
		in.fn = unop(func(a uint64) uint64 { return out64(f(fb(a)), flags) })
	default:
		hf, n, ok := halfFmt(t)
		if !ok || op != "ex2" && op != "tanh" {
			d.errorf("%s: type .%s is not supported", s.op, t)
			return
		}
		h := halfOp(hf, n, rnRN, flags, func(x, _, _ float64) float64 { return f(x) })
		in.fn = unop(func(a uint64) uint64 { return h(a, 0, 0) })
	}
}

// decCopysign decodes copysign.type d, a, b: b with the sign of a (PTX ISA
// §9.7.3.3).
func decCopysign(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	if !d.want(s, 3) {
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	in.ops[2] = d.src(s.args[2], t)
	var sign uint64
	switch t {
	case tF32:
		sign = 1 << 31
	case tF64:
		sign = 1 << 63
	default:
		d.errorf("%s: want .f32 or .f64", s.op)
		return
	}
	in.fn = binop(func(a, b uint64) uint64 { return b&^sign | a&sign })
}

// decTestp decodes testp.op.type p, a (PTX ISA §9.7.3.2).
func decTestp(d *decoder, s *astStmt, m *mods, in *inst) {
	op := m.oneOf("finite", "infinite", "number", "notanumber", "normal", "subnormal")
	t := d.oneType(s, m)
	if op == "" || !d.want(s, 2) || (t != tF32 && t != tF64) {
		d.errorf("%s: want testp.{finite,infinite,number,notanumber,normal,subnormal}.{f32,f64}", s.op)
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	get := floatReader(t, false)
	minNorm := 0x1p-1022
	if t == tF32 {
		minNorm = minNorm32
	}
	in.fn = unop(func(a uint64) uint64 {
		x := get(a)
		ax := math.Abs(x)
		switch op {
		case "finite":
			return b2u(!math.IsInf(x, 0) && !math.IsNaN(x))
		case "infinite":
			return b2u(math.IsInf(x, 0))
		case "number":
			return b2u(!math.IsNaN(x))
		case "notanumber":
			return b2u(math.IsNaN(x))
		case "normal":
			return b2u(ax >= minNorm && !math.IsInf(x, 0) && !math.IsNaN(x))
		}
		return b2u(ax > 0 && ax < minNorm)
	})
}
