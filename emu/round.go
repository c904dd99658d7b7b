package emu

// Correctly rounded float arithmetic for the PTX rounding modifiers
// .rn/.rz/.rm/.rp (PTX ISA §9.7.3 "Floating-Point Instructions", §9.7.9.21
// cvt).
//
// Results narrower than float64 (f32, f16, bf16, tf32) are computed as a
// float64 rounded to odd, then rounded once to the target format. Rounding
// to odd at 53 bits keeps exactly the information a later rounding to at
// most 51 bits needs (whether the value was exact, below or above a
// midpoint), so the two steps give the correctly rounded result where a
// plain float64 intermediate would round twice: float32(math.FMA(a, b, c))
// is wrong for some inputs, fma32 is not.

import (
	"math"
	"math/big"
	"math/bits"
)

// rmode is an IEEE 754 rounding direction.
type rmode uint8

const (
	rnRN rmode = iota // to nearest, ties to even (.rn, .rni)
	rnRZ              // toward zero (.rz, .rzi)
	rnRM              // toward -infinity (.rm, .rmi)
	rnRP              // toward +infinity (.rp, .rpi)
)

// ffmt is a binary floating-point format narrower than float64.
type ffmt struct {
	exp, man int    // exponent and explicit mantissa bits
	qnan     uint32 // canonical NaN
}

var (
	fmtF32  = ffmt{8, 23, 0x7fffffff}
	fmtF16  = ffmt{5, 10, 0x7fff}
	fmtBF16 = ffmt{8, 7, 0x7fff}
)

// narrow rounds x to format f in mode m and returns its bit pattern. For
// tf32 the pattern is the 19-bit value; callers shift it into an f32.
func narrow(x float64, f ffmt, m rmode) uint32 {
	return narrowSat(x, f, m, false)
}

// narrowSat is narrow; with satfinite, results beyond the largest finite
// value (including infinities) clamp to it.
func narrowSat(x float64, f ffmt, m rmode, satfinite bool) uint32 {
	if math.IsNaN(x) {
		return f.qnan
	}
	neg := math.Signbit(x)
	var sign uint32
	if neg {
		sign = 1 << (f.exp + f.man)
	}
	a := math.Abs(x)
	bias := 1<<(f.exp-1) - 1
	maxField := uint32(1<<f.exp - 1)
	inf := sign | maxField<<f.man
	maxFinite := sign | (maxField<<f.man - 1)
	overflow := func() uint32 {
		if satfinite {
			return maxFinite
		}
		switch {
		case m == rnRN,
			m == rnRP && !neg,
			m == rnRM && neg:
			return inf
		}
		return maxFinite
	}
	if math.IsInf(a, 0) {
		if satfinite {
			return maxFinite
		}
		return inf
	}
	if a == 0 {
		return sign
	}
	_, e := math.Frexp(a)
	e-- // a = 1.x * 2^e
	minExp := 1 - bias
	if e > bias {
		return overflow()
	}
	qexp := e - f.man
	if e < minExp {
		qexp = minExp - f.man // subnormal quantum
	}
	q := math.Ldexp(a, -qexp) // exact: a power-of-two scaling
	n := math.Floor(q)
	frac := q - n
	up := false
	switch m {
	case rnRN:
		up = frac > 0.5 || frac == 0.5 && math.Mod(n, 2) == 1
	case rnRM:
		up = neg && frac > 0
	case rnRP:
		up = !neg && frac > 0
	}
	if up {
		n++
	}
	var mag uint32
	if e < minExp {
		mag = uint32(n) // subnormal, or exactly the smallest normal when n == 2^man
	} else {
		mag = uint32(e+bias)<<f.man + uint32(n) - 1<<f.man // a carry out of n bumps the exponent
	}
	if mag>>f.man >= maxField {
		return overflow()
	}
	return sign | mag
}

// widen converts bits in format f to float64 exactly.
func widen(b uint32, f ffmt) float64 {
	neg := b>>(f.exp+f.man)&1 != 0
	e := int(b>>f.man) & (1<<f.exp - 1)
	man := b & (1<<f.man - 1)
	bias := 1<<(f.exp-1) - 1
	var v float64
	switch {
	case e == 1<<f.exp-1 && man != 0:
		return math.NaN()
	case e == 1<<f.exp-1:
		v = math.Inf(1)
	case e == 0:
		v = math.Ldexp(float64(man), 1-bias-f.man)
	default:
		v = math.Ldexp(float64(man|1<<f.man), e-bias-f.man)
	}
	if neg {
		v = -v
	}
	return v
}

func f16ToF64(h uint64) float64  { return widen(uint32(h&0xffff), fmtF16) }
func bf16ToF64(h uint64) float64 { return widen(uint32(h&0xffff), fmtBF16) }

// roundF32 rounds x to float32 in mode m.
func roundF32(x float64, m rmode) float32 {
	if m == rnRN {
		return float32(x) // Go converts with IEEE round-to-nearest-even
	}
	return math.Float32frombits(narrow(x, fmtF32, m))
}

// twoSum returns s = fl(a+b) and the exact error e = (a+b) - s (Knuth).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// toOdd returns the float64 rounded to odd of the exact value s+e, given
// s = RN(s+e). If e != 0 the exact value lies strictly between s and its
// neighbour in e's direction; one of the two has an odd significand.
func toOdd(s, e float64) float64 {
	if e == 0 || math.IsInf(s, 0) || math.IsNaN(s) || math.IsNaN(e) {
		return s
	}
	b := math.Float64bits(s)
	if b&1 == 1 {
		return s
	}
	if (e > 0) == (s > 0) {
		b++ // away from zero
	} else {
		b--
	}
	return math.Float64frombits(b)
}

// zeroSign gives the sign of an exact zero sum x+y (IEEE 754 §6.3): +0
// unless both are -0, or the mode is toward -infinity.
func zeroSum(x, y float64, m rmode) float64 {
	if x == 0 && y == 0 && math.Signbit(x) == math.Signbit(y) {
		return x
	}
	if m == rnRM {
		return math.Copysign(0, -1)
	}
	return 0
}

// addOdd returns x+y rounded to odd at 53 bits (x+y exact when zero).
func addOdd(x, y float64, m rmode) float64 {
	s, e := twoSum(x, y)
	if s == 0 && e == 0 {
		return zeroSum(x, y, m)
	}
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return s
	}
	return toOdd(s, e)
}

// fmaOdd returns x*y+z rounded to odd at 53 bits; x*y must be exact in
// float64 (true for f32, f16 and bf16 operands).
func fmaOdd(x, y, z float64, m rmode) float64 {
	p := float64(x * y)
	if math.IsInf(p, 0) || math.IsNaN(p) || math.IsInf(z, 0) || math.IsNaN(z) {
		return p + z
	}
	return addOdd(p, z, m)
}

// divOdd returns x/y rounded to odd at 53 bits.
func divOdd(x, y float64) float64 {
	q := x / y
	if q == 0 || math.IsInf(q, 0) || math.IsNaN(q) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return q
	}
	r := math.FMA(-q, y, x) // exact remainder: x - q*y
	return toOdd(q, r/y)
}

// sqrtOdd returns sqrt(x) rounded to odd at 53 bits.
func sqrtOdd(x float64) float64 {
	s := math.Sqrt(x)
	if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return s
	}
	return toOdd(s, math.FMA(-s, s, x))
}

// Float32 operations, correctly rounded in mode m.

func fma32(a, b, c float32, m rmode) float32 {
	return roundF32(fmaOdd(float64(a), float64(b), float64(c), m), m)
}

func add32(a, b float32, m rmode) float32 {
	if m == rnRN {
		return a + b
	}
	return roundF32(addOdd(float64(a), float64(b), m), m)
}

func mul32(a, b float32, m rmode) float32 {
	return roundF32(float64(a)*float64(b), m) // the product is exact
}

func div32(a, b float32, m rmode) float32 {
	if m == rnRN {
		return a / b // Go's float32 division is IEEE round-to-nearest-even
	}
	return roundF32(divOdd(float64(a), float64(b)), m)
}

func sqrt32(a float32, m rmode) float32 {
	if m == rnRN {
		// Rounding the float64 root again is exact here: 53 >= 2*24 + 2
		// bits (Figueroa, "When is double rounding innocuous?").
		return float32(math.Sqrt(float64(a)))
	}
	return roundF32(sqrtOdd(float64(a)), m)
}

// directed adjusts s = RN(v), where v = s+e exactly, to mode m.
func directed(s, e float64, m rmode) float64 {
	if e == 0 || math.IsNaN(e) || math.IsInf(s, 0) {
		return s
	}
	switch m {
	case rnRZ:
		if (e < 0) != (s < 0) {
			return math.Nextafter(s, 0)
		}
	case rnRM:
		if e < 0 {
			return math.Nextafter(s, math.Inf(-1))
		}
	case rnRP:
		if e > 0 {
			return math.Nextafter(s, math.Inf(1))
		}
	}
	return s
}

// Float64 operations, correctly rounded in mode m. Results in the float64
// subnormal range may be off by one unit in directed modes.

func add64(a, b float64, m rmode) float64 {
	if m == rnRN {
		return a + b
	}
	s, e := twoSum(a, b)
	if s == 0 && e == 0 {
		return zeroSum(a, b, m)
	}
	return directed(s, e, m)
}

func mul64(a, b float64, m rmode) float64 {
	p := a * b
	if m == rnRN || p == 0 {
		return p
	}
	return directed(p, math.FMA(a, b, -p), m)
}

func div64(a, b float64, m rmode) float64 {
	q := a / b
	if m == rnRN || q == 0 || math.IsInf(q, 0) || math.IsNaN(q) {
		return q
	}
	return directed(q, math.FMA(-q, b, a)/b, m)
}

func sqrt64(a float64, m rmode) float64 {
	s := math.Sqrt(a)
	if m == rnRN || s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return s
	}
	return directed(s, math.FMA(-s, s, a), m)
}

var bigModes = [...]big.RoundingMode{rnRN: big.ToNearestEven, rnRZ: big.ToZero, rnRM: big.ToNegativeInf, rnRP: big.ToPositiveInf}

func fma64(a, b, c float64, m rmode) float64 {
	if m == rnRN || math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsInf(c, 0) || math.IsNaN(a) || math.IsNaN(b) || math.IsNaN(c) {
		return math.FMA(a, b, c)
	}
	p := new(big.Float).SetPrec(106).Mul(big.NewFloat(a), big.NewFloat(b)) // exact
	r := new(big.Float).SetPrec(53).SetMode(bigModes[m]).Add(p, big.NewFloat(c))
	if r.Sign() == 0 {
		return zeroSum(a*b, c, m)
	}
	f, _ := r.Float64()
	return f
}

// Integer conversions (cvt, PTX ISA §9.7.9.21).

// roundInt rounds x to an integral value in mode m (.rni/.rzi/.rmi/.rpi).
func roundInt(x float64, m rmode) float64 {
	switch m {
	case rnRZ:
		return math.Trunc(x)
	case rnRM:
		return math.Floor(x)
	case rnRP:
		return math.Ceil(x)
	}
	return math.RoundToEven(x)
}

// floatToInt converts x to an integer of type t, rounding in mode m and
// saturating to t's range; NaN converts to 0 (PTX ISA §9.7.9.21: float to
// integer conversions saturate).
func floatToInt(x float64, t dtype, m rmode) uint64 {
	if math.IsNaN(x) {
		return 0
	}
	r := roundInt(x, m)
	n := t.bits()
	if t.isSigned() {
		lo := -math.Ldexp(1, n-1)
		hi := math.Ldexp(1, n-1)
		switch {
		case r < lo:
			return uint64(int64(-1)<<(n-1)) & t.mask()
		case r >= hi:
			return uint64(1)<<(n-1) - 1
		}
		return uint64(int64(r)) & t.mask()
	}
	switch {
	case r <= 0:
		return 0
	case r >= math.Ldexp(1, n):
		return t.mask()
	}
	return uint64(r)
}

// intToFloat converts the integer v (of type src) to a float64 that is
// exact, or rounded to odd when v has more than 53 significant bits, so
// that narrowing it to f32/f16 in mode m is correct; with toF64 the result
// is instead rounded to float64 in mode m.
func intToFloat(v uint64, src dtype, m rmode, toF64 bool) float64 {
	v = src.ext(v)
	neg := src.isSigned() && int64(v) < 0
	mag := v
	if neg {
		mag = -v
	}
	var f float64
	if n := bits.Len64(mag) - 53; n <= 0 {
		f = float64(mag)
	} else {
		hi := mag >> n
		rem := mag & (1<<n - 1)
		if toF64 {
			half := uint64(1) << (n - 1)
			switch {
			case m == rnRN && (rem > half || rem == half && hi&1 == 1),
				m == rnRM && neg && rem != 0,
				m == rnRP && !neg && rem != 0:
				hi++
			}
		} else if rem != 0 {
			hi |= 1
		}
		f = math.Ldexp(float64(hi), n)
	}
	if neg {
		f = -f
	}
	return f
}
