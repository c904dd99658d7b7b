package compiler

// Math intrinsics: gpu's generic math, the math and math/bits functions
// kernels may call, and Half/BFloat16 conversions. float32 transcendental
// functions use the special function unit (ex2/lg2/sin.approx, PTX ISA
// §9.7.3.x) after an exact range reduction; the error bounds are stated in
// package gpu's docs and checked by the compiler's emulator tests. Those
// with no short hardware sequence (Tanh, Erf, and float64 Exp, Log, Sin,
// ...) are Go routines in package devmath, inlined like helpers.

import (
	"math"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

func f32c(x float64) ir.Operand   { return ir.Imm(ir.F32, uint64(math.Float32bits(float32(x)))) }
func f32bits(b uint32) ir.Operand { return ir.Imm(ir.F32, uint64(b)) }

var mathIntrinsics = map[string]intrinsicFunc{
	"Sqrt":  func(kb *kernelBuilder, c *icall) *val { return scalar(kb.unaryMath(ir.OpSqrt, "rn", c)) },
	"Abs":   func(kb *kernelBuilder, c *icall) *val { return scalar(kb.unaryMath(ir.OpAbs, "", c)) },
	"Floor": func(kb *kernelBuilder, c *icall) *val { return scalar(kb.round(c, "rmi")) },
	"Ceil":  func(kb *kernelBuilder, c *icall) *val { return scalar(kb.round(c, "rpi")) },
	"FMA": func(kb *kernelBuilder, c *icall) *val {
		st := scalarType(c.elem)
		r := kb.b.New(st)
		kb.b.Fma(st, r, ir.R(kb.reg(c.arg(0), st)), c.arg(1), c.arg(2))
		return scalar(r)
	},
	"Min": func(kb *kernelBuilder, c *icall) *val {
		return scalar(kb.minMax(false, scalarType(c.elem), c.arg(0), c.arg(1), false))
	},
	"Max": func(kb *kernelBuilder, c *icall) *val {
		return scalar(kb.minMax(true, scalarType(c.elem), c.arg(0), c.arg(1), false))
	},
	"Rsqrt": func(kb *kernelBuilder, c *icall) *val {
		st := scalarType(c.elem)
		if st == ir.F32 {
			return scalar(kb.unaryMath(ir.OpRsqrt, "approx", c))
		}
		s := kb.b.New(st)
		kb.b.Math(ir.OpSqrt, "rn", st, s, c.arg(0))
		one := ir.Imm(ir.F64, math.Float64bits(1))
		if r, ok := kb.reciprocal(st, one, ir.R(s)); ok {
			return scalar(r)
		}
		r := kb.b.New(st)
		kb.b.Arith(ir.OpDiv, st, r, one, ir.R(s))
		return scalar(r)
	},
	"Exp2": func(kb *kernelBuilder, c *icall) *val {
		if scalarType(c.elem) == ir.F32 {
			// fastmath: flush subnormal arguments and results (.ftz), which
			// spares ptxas's range fix-up around MUFU.EX2 (an FSETP and two
			// FMULs per call on sm_80 and sm_90).
			if kb.f.FastMath {
				return scalar(kb.unaryMath(ir.OpEx2, "approx.ftz", c))
			}
			return scalar(kb.unaryMath(ir.OpEx2, "approx", c))
		}
		return kb.devmath(c, "Exp2")
	},
	"Log2": func(kb *kernelBuilder, c *icall) *val {
		if scalarType(c.elem) == ir.F32 {
			return scalar(kb.unaryMath(ir.OpLg2, "approx", c))
		}
		return kb.devmath(c, "Log2")
	},
	"Log": func(kb *kernelBuilder, c *icall) *val {
		if scalarType(c.elem) == ir.F32 {
			l := kb.unaryMath(ir.OpLg2, "approx", c)
			r := kb.b.New(ir.F32)
			kb.b.Arith(ir.OpMul, ir.F32, r, ir.R(l), f32bits(0x3f317218)) // ln 2
			return scalar(r)
		}
		return kb.devmath(c, "Log")
	},
	"Exp": func(kb *kernelBuilder, c *icall) *val {
		if scalarType(c.elem) == ir.F32 && kb.f.FastMath {
			return scalar(kb.fastExp32(c.arg(0)))
		}
		if scalarType(c.elem) == ir.F32 {
			return scalar(kb.exp32(c.arg(0)))
		}
		return kb.devmath(c, "Exp")
	},
	"Sin": func(kb *kernelBuilder, c *icall) *val {
		if scalarType(c.elem) == ir.F32 && kb.f.FastMath {
			return scalar(kb.unaryMath(ir.OpSin, "approx.ftz", c))
		}
		if scalarType(c.elem) == ir.F32 {
			return scalar(kb.sincos32(ir.OpSin, c.arg(0)))
		}
		return kb.devmath(c, "Sin")
	},
	"Cos": func(kb *kernelBuilder, c *icall) *val {
		if scalarType(c.elem) == ir.F32 && kb.f.FastMath {
			return scalar(kb.unaryMath(ir.OpCos, "approx.ftz", c))
		}
		if scalarType(c.elem) == ir.F32 {
			return scalar(kb.sincos32(ir.OpCos, c.arg(0)))
		}
		return kb.devmath(c, "Cos")
	},
	"Tanh": func(kb *kernelBuilder, c *icall) *val {
		if scalarType(c.elem) == ir.F32 && kb.f.FastMath && kb.tgt.sm >= 75 {
			return scalar(kb.unaryMath(ir.OpTanh, "approx", c)) // PTX ISA §9.7.3.22, sm_75+
		}
		return kb.devmath(c, "Tanh")
	},
	"Erf": func(kb *kernelBuilder, c *icall) *val { return kb.devmath(c, "Erf") },

	"Half.Float32": func(kb *kernelBuilder, c *icall) *val {
		r := kb.b.New(ir.F32)
		kb.b.Cvt(ir.F32, ir.F16, "", r, ir.R(kb.reg(c.arg(0), ir.U16)))
		return scalar(r)
	},
	"BFloat16.Float32": func(kb *kernelBuilder, c *icall) *val {
		w := kb.b.New(ir.U32)
		kb.b.Cvt(ir.U32, ir.U16, "", w, ir.R(kb.reg(c.arg(0), ir.U16)))
		kb.b.Shift(ir.OpShl, ir.B32, w, ir.R(w), ir.Imm(ir.U32, 16))
		r := kb.b.New(ir.F32)
		kb.b.Emit(ir.OpMov, "mov.b32", ir.R(r), ir.R(w))
		return scalar(r)
	},
	"ToHalf": func(kb *kernelBuilder, c *icall) *val {
		r := kb.b.New(ir.U16)
		kb.b.Cvt(ir.F16, ir.F32, "rn", r, ir.R(kb.reg(c.arg(0), ir.F32)))
		return scalar(r)
	},
	"ToBFloat16":    (*kernelBuilder).toBF16,
	"PackHalf2":     (*kernelBuilder).pack2,
	"PackBFloat162": (*kernelBuilder).pack2,
	"Float32Bits": func(kb *kernelBuilder, c *icall) *val {
		r := kb.b.New(ir.U32)
		kb.b.Emit(ir.OpMov, "mov.b32", ir.R(r), ir.R(kb.reg(c.arg(0), ir.F32)))
		return scalar(r)
	},
	"Float32FromBits": func(kb *kernelBuilder, c *icall) *val {
		r := kb.b.New(ir.F32)
		kb.b.Emit(ir.OpMov, "mov.b32", ir.R(r), ir.R(kb.reg(c.arg(0), ir.U32)))
		return scalar(r)
	},
}

func (kb *kernelBuilder) unaryMath(op ir.Op, mods string, c *icall) ir.Reg {
	st := scalarType(c.elem)
	if c.elem == nil {
		st = scalarType(c.call.Call.Args[0].Type())
	}
	r := kb.b.New(st)
	if st == ir.F64 && mods == "approx" {
		mods = "approx.ftz"
	}
	kb.b.Math(op, mods, st, r, ir.R(kb.reg(c.arg(0), st)))
	return r
}

func (kb *kernelBuilder) round(c *icall, mode string) ir.Reg {
	st := scalarType(c.elem)
	if c.elem == nil {
		st = scalarType(c.call.Call.Args[0].Type())
	}
	r := kb.b.New(st)
	kb.b.Cvt(st, st, mode, r, ir.R(kb.reg(c.arg(0), st)))
	return r
}

// fastExp32 is e**x for fastmath kernels: ex2.approx.ftz of x·log2 e,
// without exp32's exact range reduction (the relative error grows with
// |x|, about 2 ulp per unit of x·log2 e; flushes subnormals).
func (kb *kernelBuilder) fastExp32(xo ir.Operand) ir.Reg {
	t := kb.b.New(ir.F32)
	kb.b.Arith(ir.OpMul, ir.F32, t, ir.R(kb.reg(xo, ir.F32)), f32bits(0x3fb8aa3b)) // log2 e
	r := kb.b.New(ir.F32)
	kb.b.Math(ir.OpEx2, "approx.ftz", ir.F32, r, ir.R(t))
	return r
}

// exp32 computes e**x as 2**(r·log2 e)·2**n with n = rint(x·log2 e) and
// r = x - n·ln 2 reduced exactly (Cody–Waite, two fma steps), so the
// approximate ex2 only sees |arg| ≤ 0.5. 2**n is applied in two halves so
// that results near the overflow and underflow thresholds are not lost.
func (kb *kernelBuilder) exp32(xo ir.Operand) ir.Reg {
	x := kb.reg(xo, ir.F32)
	cl := kb.b.New(ir.F32)
	kb.b.Arith(ir.OpMax, ir.F32, cl, ir.R(x), f32c(-104))
	kb.b.Arith(ir.OpMin, ir.F32, cl, ir.R(cl), f32c(89))
	t := kb.b.New(ir.F32)
	kb.b.Arith(ir.OpMul, ir.F32, t, ir.R(cl), f32bits(0x3fb8aa3b)) // log2 e
	n := kb.b.New(ir.F32)
	kb.b.Cvt(ir.F32, ir.F32, "rni", n, ir.R(t))
	r := kb.b.New(ir.F32)
	kb.b.Fma(ir.F32, r, ir.R(n), f32bits(0xbf317200), ir.R(cl)) // -ln2 hi
	kb.b.Fma(ir.F32, r, ir.R(n), f32bits(0xb5bfbe8e), ir.R(r))  // -ln2 lo
	kb.b.Arith(ir.OpMul, ir.F32, r, ir.R(r), f32bits(0x3fb8aa3b))
	e := kb.b.New(ir.F32)
	kb.b.Math(ir.OpEx2, "approx", ir.F32, e, ir.R(r))
	h := kb.b.New(ir.F32)
	kb.b.Arith(ir.OpMul, ir.F32, h, ir.R(n), f32c(0.5))
	kb.b.Cvt(ir.F32, ir.F32, "rmi", h, ir.R(h))
	h2 := kb.b.New(ir.F32)
	kb.b.Arith(ir.OpSub, ir.F32, h2, ir.R(n), ir.R(h))
	s1, s2 := kb.b.New(ir.F32), kb.b.New(ir.F32)
	kb.b.Math(ir.OpEx2, "approx", ir.F32, s1, ir.R(h))
	kb.b.Math(ir.OpEx2, "approx", ir.F32, s2, ir.R(h2))
	kb.b.Arith(ir.OpMul, ir.F32, e, ir.R(e), ir.R(s1))
	kb.b.Arith(ir.OpMul, ir.F32, e, ir.R(e), ir.R(s2))
	// NaN in, NaN out (the clamp would have replaced it).
	nan := kb.b.New(ir.Pred)
	kb.b.Setp("nan", ir.F32, nan, ir.R(x), ir.R(x))
	kb.b.Selp(ir.F32, e, ir.R(x), ir.R(e), nan)
	return e
}

// sincos32 reduces x by k·2π (k = rint(x/2π), 2π split in three parts so
// each fma is exact for |k| < 2^16) into [-π, π], where sin.approx and
// cos.approx have absolute error at most 2^-20.5.
func (kb *kernelBuilder) sincos32(op ir.Op, xo ir.Operand) ir.Reg {
	x := kb.reg(xo, ir.F32)
	k := kb.b.New(ir.F32)
	kb.b.Arith(ir.OpMul, ir.F32, k, ir.R(x), f32bits(0x3e22f983)) // 1/2π
	kb.b.Cvt(ir.F32, ir.F32, "rni", k, ir.R(k))
	r := kb.b.New(ir.F32)
	kb.b.Fma(ir.F32, r, ir.R(k), f32bits(0xc0c90000), ir.R(x))
	kb.b.Fma(ir.F32, r, ir.R(k), f32bits(0xbafdaa22), ir.R(r))
	kb.b.Fma(ir.F32, r, ir.R(k), f32bits(0xad346000), ir.R(r))
	out := kb.b.New(ir.F32)
	kb.b.Math(op, "approx", ir.F32, out, ir.R(r))
	return out
}

func (kb *kernelBuilder) toBF16(c *icall) *val {
	x := kb.reg(c.arg(0), ir.F32)
	r := kb.b.New(ir.U16)
	if kb.tgt.sm >= 80 {
		kb.b.Cvt(ir.BF16, ir.F32, "rn", r, ir.R(x))
		return scalar(r)
	}
	// Round to nearest even by hand: bits + 0x7fff + ((bits>>16)&1),
	// keeping NaNs quiet.
	b := kb.b.New(ir.U32)
	kb.b.Emit(ir.OpMov, "mov.b32", ir.R(b), ir.R(x))
	lsb := kb.b.New(ir.U32)
	kb.b.Shift(ir.OpShr, ir.U32, lsb, ir.R(b), ir.Imm(ir.U32, 16))
	kb.b.Arith(ir.OpAnd, ir.U32, lsb, ir.R(lsb), ir.Imm(ir.U32, 1))
	kb.b.Arith(ir.OpAdd, ir.U32, lsb, ir.R(lsb), ir.Imm(ir.U32, 0x7fff))
	kb.b.Arith(ir.OpAdd, ir.U32, lsb, ir.R(lsb), ir.R(b))
	kb.b.Shift(ir.OpShr, ir.U32, lsb, ir.R(lsb), ir.Imm(ir.U32, 16))
	nan := kb.b.New(ir.Pred)
	kb.b.Setp("nan", ir.F32, nan, ir.R(x), ir.R(x))
	kb.b.Selp(ir.U32, lsb, ir.Imm(ir.U32, 0x7fc0), ir.R(lsb), nan)
	kb.b.Cvt(ir.U16, ir.U32, "", r, ir.R(lsb))
	return scalar(r)
}

func (kb *kernelBuilder) pack2(c *icall) *val {
	if w, ok := kb.pairWord(c.fr, c.call); ok {
		return w
	}
	r := kb.b.New(ir.U32)
	kb.b.Emit(ir.OpMov, "mov.b32", ir.R(r), ir.Vec(kb.reg(c.arg(0), ir.U16), kb.reg(c.arg(1), ir.U16)))
	return scalar(r)
}

// devmath inlines the float32 or float64 routine of package devmath that
// implements gpu.<name>: devmath.<name>32 or devmath.<name>64.
func (kb *kernelBuilder) devmath(c *icall, name string) *val {
	st := scalarType(c.elem)
	if c.elem == nil {
		st = scalarType(c.call.Call.Args[0].Type())
	}
	suffix := "32"
	if st == ir.F64 {
		suffix = "64"
	}
	fn := kb.devmathFunc(name + suffix)
	if fn == nil {
		kb.d.errorf(c.call.Pos(), UnsupportedCall, "%s on %s is not available on the device yet", describe(c.name), st)
		return kb.zeroVal(c.call.Type())
	}
	args := make([]*val, len(c.args))
	copy(args, c.args)
	// The callee takes only the numeric arguments.
	return kb.inlineDirect(c.fr, c.call, fn, args)
}

var stdMath = map[string]string{
	"Sqrt": "Sqrt", "Abs": "Abs", "Floor": "Floor", "Ceil": "Ceil", "FMA": "FMA",
	"Exp": "Exp", "Exp2": "Exp2", "Log": "Log", "Log2": "Log2", "Sin": "Sin", "Cos": "Cos",
	"Tanh": "Tanh", "Erf": "Erf",
	"Float32bits": "Float32Bits", "Float32frombits": "Float32FromBits",
}

// stdIntrinsic lowers math and math/bits functions.
func (kb *kernelBuilder) stdIntrinsic(fr *frame, call *ssa.Call, path, name string) *val {
	c := &icall{fr: fr, call: call, name: path + "." + name}
	if len(call.Call.Args) > 0 {
		// The gpu handlers take their float type from elem.
		c.elem = call.Call.Args[0].Type()
	}
	for _, a := range call.Call.Args {
		c.args = append(c.args, kb.value(fr, a))
	}
	if path == "math" {
		if g, ok := stdMath[name]; ok {
			return intrinsics[g](kb, c)
		}
		switch name {
		case "Float64bits", "Float64frombits":
			r := kb.b.New(scalarType(call.Type()))
			kb.b.Emit(ir.OpMov, "mov.b64", ir.R(r), ir.R(kb.reg(c.arg(0), scalarType(call.Call.Args[0].Type()))))
			return scalar(r)
		case "Trunc":
			return scalar(kb.round(c, "rzi"))
		case "IsNaN":
			p := kb.b.New(ir.Pred)
			x := kb.reg(c.arg(0), ir.F64)
			kb.b.Setp("nan", ir.F64, p, ir.R(x), ir.R(x))
			return scalar(p)
		case "Copysign":
			r := kb.b.New(ir.F64)
			// copysign.f64 d, a, b copies a's sign onto b (PTX ISA §9.7.3.2).
			kb.b.Emit(ir.OpCopysign, "copysign.f64", ir.R(r), ir.R(kb.reg(c.arg(1), ir.F64)), ir.R(kb.reg(c.arg(0), ir.F64)))
			return scalar(r)
		case "Max", "Min":
			return scalar(kb.minMax(name == "Max", ir.F64, c.arg(0), c.arg(1), true))
		}
	}
	if path == "math/bits" {
		if v := kb.bitsIntrinsic(c, name); v != nil {
			return v
		}
	}
	kb.d.errorf(call.Pos(), UnsupportedCall, "%s.%s is not supported in kernels (see docs/language.md for the math and math/bits functions that are)", path, name)
	return kb.zeroVal(call.Type())
}

func (kb *kernelBuilder) bitsIntrinsic(c *icall, name string) *val {
	argT := scalarType(c.call.Call.Args[0].Type())
	if argT == ir.Invalid {
		return nil
	}
	x := kb.reg(c.arg(0), argT)
	toInt := func(r ir.Reg) *val {
		o := kb.b.New(ir.S64)
		kb.b.Cvt(ir.S64, ir.U32, "", o, ir.R(r))
		return scalar(o)
	}
	w := argT.Bits()
	if w != 32 && w != 64 {
		return nil
	}
	switch name {
	case "OnesCount32", "OnesCount64", "OnesCount":
		r := kb.b.New(ir.U32)
		kb.b.Unary(ir.OpPopc, argT, r, ir.R(x))
		return toInt(r)
	case "LeadingZeros32", "LeadingZeros64", "LeadingZeros":
		r := kb.b.New(ir.U32)
		kb.b.Unary(ir.OpClz, argT, r, ir.R(x))
		return toInt(r)
	case "Len32", "Len64", "Len":
		r := kb.b.New(ir.U32)
		kb.b.Unary(ir.OpClz, argT, r, ir.R(x))
		kb.b.Arith(ir.OpSub, ir.U32, r, ir.Imm(ir.U32, uint64(w)), ir.R(r))
		return toInt(r)
	case "TrailingZeros32", "TrailingZeros64", "TrailingZeros":
		// ctz(x) = clz(brev(x)); 0 gives the width, as in Go.
		rev := kb.b.New(argT)
		kb.b.Unary(ir.OpBrev, argT, rev, ir.R(x))
		r := kb.b.New(ir.U32)
		kb.b.Unary(ir.OpClz, argT, r, ir.R(rev))
		return toInt(r)
	case "Reverse32", "Reverse64", "Reverse":
		r := kb.b.New(argT)
		kb.b.Unary(ir.OpBrev, argT, r, ir.R(x))
		return scalar(r)
	case "RotateLeft32", "RotateLeft64", "RotateLeft":
		k := kb.b.New(ir.U32)
		kb.b.Cvt(ir.U32, ir.S64, "", k, ir.R(kb.reg(c.arg(1), ir.S64)))
		kb.b.Arith(ir.OpAnd, ir.U32, k, ir.R(k), ir.Imm(ir.U32, uint64(w-1)))
		rk := kb.b.New(ir.U32)
		kb.b.Arith(ir.OpSub, ir.U32, rk, ir.Imm(ir.U32, uint64(w)), ir.R(k))
		hi, lo := kb.b.New(argT), kb.b.New(argT)
		kb.b.Shift(ir.OpShl, argT, hi, ir.R(x), ir.R(k))
		kb.b.Shift(ir.OpShr, argT.Unsigned(), lo, ir.R(x), ir.R(rk))
		r := kb.b.New(argT)
		kb.b.Arith(ir.OpOr, argT, r, ir.R(hi), ir.R(lo))
		return scalar(r)
	}
	return nil
}
