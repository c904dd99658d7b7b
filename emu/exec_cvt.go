package emu

// Conversions: cvt between integer and float types of every width (PTX
// ISA §9.7.9.21). Float-to-integer conversions round as the .rni/.rzi/
// .rmi/.rpi modifier says, saturate to the destination range and turn NaN
// into 0. Float-to-float narrowing and integer-to-float conversions round
// as .rn/.rz/.rm/.rp says. Integer-to-integer conversions truncate, or
// clamp with .sat.

import (
	"math"
)

// fmtOf gives the narrow float format of t, if t is one.
func fmtOf(t dtype) (ffmt, bool) {
	switch t {
	case tF32:
		return fmtF32, true
	case tF16:
		return fmtF16, true
	case tBF16:
		return fmtBF16, true
	}
	return ffmt{}, false
}

func decCvt(d *decoder, s *astStmt, m *mods, in *inst) {
	relu := m.word("relu")
	if len(m.types) != 2 {
		d.errorf("%s: want cvt.dtype.atype", s.op)
		return
	}
	dt, at := m.types[0], m.types[1]
	in.t, in.t2 = dt, at
	rm := m.rnd
	flags := m.flags
	ftz := flags&fFtz != 0
	sat := flags&fSat != 0
	if (dt == tF16x2 || dt == tBF16x2) && at == tF32 {
		// cvt.rn{.relu}{.satfinite}.f16x2.f32 d, a, b: a to the upper half,
		// b to the lower.
		if !d.want(s, 3) {
			return
		}
		f := fmtF16
		if dt == tBF16x2 {
			f = fmtBF16
		}
		in.ops[0] = d.dst(s.args[0])
		in.ops[1] = d.src(s.args[1], at)
		in.ops[2] = d.src(s.args[2], at)
		one := func(a uint64) uint64 { return uint64(cvtToHalf(f32(a, false), f, rm, relu, flags&fSatFinite != 0)) }
		in.fn = binop(func(a, b uint64) uint64 { return one(a)<<16 | one(b) })
		return
	}
	if !d.want(s, 2) {
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], at)
	switch {
	case !dt.isFloat() && !at.isFloat():
		if dt == tPred || at == tPred {
			d.errorf("%s: .pred is not a conversion type", s.op)
			return
		}
		lo, hi := intRange(dt)
		signedSrc := at.isSigned()
		in.fn = unop(func(a uint64) uint64 {
			v := at.ext(a)
			if sat {
				if signedSrc {
					x := int64(v)
					switch {
					case lo < 0 && x < lo:
						return dt.ext(uint64(lo))
					case lo == 0 && x < 0:
						return 0
					case x > 0 && uint64(x) > hi:
						return dt.ext(hi)
					}
				} else if v > hi {
					return dt.ext(hi)
				}
			}
			return dt.ext(v)
		})
	case dt.isFloat() && !at.isFloat():
		if flags&fRndGiven != 0 && m.intRnd {
			d.errorf("%s: integer-to-float conversions take .rn/.rz/.rm/.rp", s.op)
			return
		}
		switch dt {
		case tF64:
			in.fn = unop(func(a uint64) uint64 { return out64(intToFloat(a, at, rm, true), flags) })
		case tF32:
			in.fn = unop(func(a uint64) uint64 { return out32(roundF32(intToFloat(a, at, rm, false), rm), flags) })
		case tF16, tBF16:
			f, _ := fmtOf(dt)
			in.fn = unop(func(a uint64) uint64 {
				x := intToFloat(a, at, rm, false)
				if sat {
					x = min(max(x, 0), 1)
				}
				return uint64(narrow(x, f, rm))
			})
		default:
			d.errorf("%s: unsupported destination type", s.op)
		}
	case !dt.isFloat() && at.isFloat():
		if flags&fRndGiven == 0 || !m.intRnd {
			d.errorf("%s: float-to-integer conversions need .rni, .rzi, .rmi or .rpi", s.op)
			return
		}
		get := floatReader(at, ftz)
		if get == nil {
			d.errorf("%s: unsupported source type", s.op)
			return
		}
		in.fn = unop(func(a uint64) uint64 { return dt.ext(floatToInt(get(a), dt, rm)) })
	default:
		get := floatReader(at, ftz)
		if get == nil {
			d.errorf("%s: unsupported source type .%s", s.op, at)
			return
		}
		intRnd := flags&fRndGiven != 0 && m.intRnd
		if intRnd && dt != at {
			d.errorf("%s: .rni/.rzi/.rmi/.rpi need equal float types", s.op)
			return
		}
		narrowing := dt.size() < at.size() || dt == tBF16 && at == tF16 || dt == tF16 && at == tBF16
		if narrowing && flags&fRndGiven == 0 {
			d.errorf("%s: narrowing float conversions need .rn, .rz, .rm or .rp", s.op)
			return
		}
		conv := func(x float64) float64 {
			if intRnd {
				return roundInt(x, rm)
			}
			return x
		}
		switch dt {
		case tF64:
			in.fn = unop(func(a uint64) uint64 { return out64(conv(get(a)), flags) })
		case tF32:
			in.fn = unop(func(a uint64) uint64 {
				x := conv(get(a))
				if relu && x < 0 {
					x = 0
				}
				return out32(roundF32(x, rm), flags)
			})
		case tF16, tBF16:
			f, _ := fmtOf(dt)
			satf := flags&fSatFinite != 0
			in.fn = unop(func(a uint64) uint64 {
				x := conv(get(a))
				if sat && !math.IsNaN(x) {
					x = min(max(x, 0), 1)
				}
				if sat && math.IsNaN(x) {
					return 0
				}
				return uint64(cvtToHalf64(x, f, rm, relu, satf))
			})
		default:
			d.errorf("%s: unsupported destination type .%s", s.op, dt)
		}
	}
}

// intRange gives the range of integer type t: lo as int64, hi as uint64.
func intRange(t dtype) (int64, uint64) {
	n := t.bits()
	if t.isSigned() {
		return -1 << (n - 1), 1<<(n-1) - 1
	}
	return 0, t.mask()
}

func cvtToHalf(x float32, f ffmt, m rmode, relu, satfinite bool) uint32 {
	return cvtToHalf64(float64(x), f, m, relu, satfinite)
}

func cvtToHalf64(x float64, f ffmt, m rmode, relu, satfinite bool) uint32 {
	if relu && (x < 0 || math.IsNaN(x)) {
		if math.IsNaN(x) {
			return f.qnan
		}
		return 0
	}
	return narrowSat(x, f, m, satfinite)
}
