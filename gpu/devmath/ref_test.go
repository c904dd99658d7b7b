package devmath_test

// High-precision references for the float64 routines, in math/big: Taylor
// series after an exact (or very wide) argument reduction. Each returns
// the function's value to far more than 53 bits for any float64 input in
// the ranges the tests use.

import (
	"math"
	"math/big"
	"sync"
)

const refPrec = 400

func newF(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }

func bf(prec uint) *big.Float { return new(big.Float).SetPrec(prec) }

// atanhInv returns atanh(1/n) = Σ 1/((2k+1)·n^(2k+1)) at prec bits.
func atanhInv(n int64, prec uint) *big.Float {
	sum := bf(prec)
	nn := bf(prec).SetInt64(n * n)
	pow := bf(prec).Quo(bf(prec).SetInt64(1), bf(prec).SetInt64(n)) // 1/n^(2k+1)
	eps := bf(prec).SetMantExp(big.NewFloat(1), -int(prec)-8)
	for k := int64(0); ; k++ {
		term := bf(prec).Quo(pow, bf(prec).SetInt64(2*k+1))
		sum.Add(sum, term)
		if term.Cmp(eps) < 0 {
			return sum
		}
		pow.Quo(pow, nn)
	}
}

// atanInv returns atan(1/n) at prec bits.
func atanInv(n int64, prec uint) *big.Float {
	sum := bf(prec)
	nn := bf(prec).SetInt64(n * n)
	pow := bf(prec).Quo(bf(prec).SetInt64(1), bf(prec).SetInt64(n))
	eps := bf(prec).SetMantExp(big.NewFloat(1), -int(prec)-8)
	for k := int64(0); ; k++ {
		term := bf(prec).Quo(pow, bf(prec).SetInt64(2*k+1))
		if k%2 == 0 {
			sum.Add(sum, term)
		} else {
			sum.Sub(sum, term)
		}
		if term.Cmp(eps) < 0 {
			return sum
		}
		pow.Quo(pow, nn)
	}
}

const piPrec = 1600 // enough to reduce any float64 (|x| < 2^1024) by π/2

var consts struct {
	once              sync.Once
	pi, ln2, sqrtPi   *big.Float
	halfPi, twoOverPi *big.Float
}

func initConsts() {
	consts.once.Do(func() {
		// Machin: π = 16·atan(1/5) - 4·atan(1/239).
		a := bf(piPrec).Mul(bf(piPrec).SetInt64(16), atanInv(5, piPrec))
		b := bf(piPrec).Mul(bf(piPrec).SetInt64(4), atanInv(239, piPrec))
		consts.pi = bf(piPrec).Sub(a, b)
		consts.halfPi = bf(piPrec).Quo(consts.pi, bf(piPrec).SetInt64(2))
		consts.twoOverPi = bf(piPrec).Quo(bf(piPrec).SetInt64(2), consts.pi)
		consts.ln2 = bf(refPrec).Mul(bf(refPrec).SetInt64(2), atanhInv(3, refPrec)) // ln 2 = 2·atanh(1/3)
		consts.sqrtPi = bf(refPrec).Sqrt(bf(refPrec).Set(consts.pi))
	})
}

// taylor sums Σ c_n·x^n with c_n = c_{n-1}·step(n), c_0 given, until the
// term drops below 2^-(prec+8) relative to the sum.
func taylor(x *big.Float, c0 *big.Float, step func(n int64, c *big.Float), prec uint) *big.Float {
	sum := bf(prec).Set(c0)
	term := bf(prec).Set(c0)
	for n := int64(1); ; n++ {
		step(n, term)
		term.Mul(term, x)
		sum.Add(sum, term)
		if term.Sign() == 0 || (sum.Sign() != 0 && term.MantExp(nil) < sum.MantExp(nil)-int(prec)-8) {
			return sum
		}
	}
}

// refExpm1 returns e**x - 1 for |x| ≤ 1.
func refExpm1(x *big.Float) *big.Float {
	// Σ_{n≥1} x^n/n! = x·Σ_{n≥0} x^n/(n+1)!
	s := taylor(x, bf(refPrec).SetInt64(1), func(n int64, c *big.Float) { c.Quo(c, bf(refPrec).SetInt64(n+1)) }, refPrec)
	return s.Mul(s, x)
}

// refExp returns e**x for |x| < 1200.
func refExp(x float64) *big.Float {
	prec := uint(refPrec + 64)
	_, e := math.Frexp(x)
	s := 0
	if e > -12 {
		s = e + 12
	}
	r := bf(prec).SetMantExp(bf(prec).SetFloat64(x), -s) // x/2^s, |r| < 2^-12
	y := taylor(r, bf(prec).SetInt64(1), func(n int64, c *big.Float) { c.Quo(c, bf(prec).SetInt64(n)) }, prec)
	for range s {
		y.Mul(y, y)
	}
	return y
}

// refExp2 returns 2**x for |x| < 1100: 2**k · e**(f·ln 2).
func refExp2(x float64) *big.Float {
	initConsts()
	k := math.Floor(x)
	f := bf(refPrec).Sub(newF(x), newF(k)) // exact in big
	f.Mul(f, consts.ln2)
	y := bf(refPrec).Add(refExpm1(f), bf(refPrec).SetInt64(1))
	return y.SetMantExp(y, int(k))
}

// refLog returns log(x) for finite x > 0, and log2(x) when base2.
func refLog(x float64, base2 bool) *big.Float {
	initConsts()
	m, e := math.Frexp(x) // m in [1/2, 1)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	// log m = 2·atanh(u), u = (m-1)/(m+1), |u| ≤ 0.172.
	bm := newF(m)
	u := bf(refPrec).Quo(bf(refPrec).Sub(bm, newF(1)), bf(refPrec).Add(bm, newF(1)))
	u2 := bf(refPrec).Mul(u, u)
	at := taylor(u2, bf(refPrec).SetInt64(1), func(n int64, c *big.Float) {
		c.Mul(c, bf(refPrec).SetInt64(2*n-1))
		c.Quo(c, bf(refPrec).SetInt64(2*n+1))
	}, refPrec)
	lm := at.Mul(at, u)
	lm.Mul(lm, bf(refPrec).SetInt64(2))
	if base2 {
		lm.Quo(lm, consts.ln2)
		return lm.Add(lm, bf(refPrec).SetInt64(int64(e)))
	}
	el := bf(refPrec).Mul(bf(refPrec).SetInt64(int64(e)), consts.ln2)
	return lm.Add(lm, el)
}

// refSinCos returns sin(x) (cos when cos is set) for any finite x.
func refSinCos(x float64, cos bool) *big.Float {
	initConsts()
	bx := bf(piPrec).SetFloat64(x)
	k := bf(piPrec).Mul(bx, consts.twoOverPi)
	ki := bigFloor(k.Add(k, bf(piPrec).SetFloat64(0.5))) // nearest multiple of π/2
	kf := bf(piPrec).SetInt(ki)
	rr := bf(piPrec).Mul(kf, consts.halfPi)
	rr.Sub(bx, rr) // |rr| ≤ π/4
	r := bf(refPrec).Set(rr)
	q := new(big.Int).Mod(ki, big.NewInt(4)).Int64()
	if cos {
		q = (q + 1) % 4
	}
	r2 := bf(refPrec).Mul(r, r)
	r2.Neg(r2)
	var y *big.Float
	if q%2 == 0 { // sin r = r·Σ (-r²)^n/(2n+1)!
		y = taylor(r2, bf(refPrec).SetInt64(1), func(n int64, c *big.Float) { c.Quo(c, bf(refPrec).SetInt64(2*n*(2*n+1))) }, refPrec)
		y.Mul(y, r)
	} else { // cos r = Σ (-r²)^n/(2n)!
		y = taylor(r2, bf(refPrec).SetInt64(1), func(n int64, c *big.Float) { c.Quo(c, bf(refPrec).SetInt64(2*n*(2*n-1))) }, refPrec)
	}
	if q >= 2 {
		y.Neg(y)
	}
	return y
}

// bigFloor returns ⌊f⌋.
func bigFloor(f *big.Float) *big.Int {
	i, acc := f.Int(nil) // truncates toward zero
	if f.Sign() < 0 && acc == big.Above {
		i.Sub(i, big.NewInt(1))
	}
	return i
}

// refTanh returns tanh(x) for finite x.
func refTanh(x float64) *big.Float {
	a := math.Abs(x)
	var y *big.Float
	switch {
	case a > 200:
		y = bf(refPrec).SetInt64(1)
	case a < 1: // t/(t+2), t = expm1(2a)
		t := refExpm1(newF(2 * a))
		y = bf(refPrec).Quo(t, bf(refPrec).Add(t, bf(refPrec).SetInt64(2)))
	default: // (E-1)/(E+1)
		e := refExp(2 * a)
		num := bf(refPrec).Sub(e, bf(refPrec).SetInt64(1))
		y = bf(refPrec).Quo(num, e.Add(e, bf(refPrec).SetInt64(1)))
	}
	if x < 0 {
		y.Neg(y)
	}
	return y
}

// refErf returns erf(x) for finite x (±1 beyond |x| = 9, where
// erfc < 2^-120).
func refErf(x float64) *big.Float {
	initConsts()
	a := math.Abs(x)
	if a > 9 {
		return bf(refPrec).SetInt64(int64(math.Copysign(1, x)))
	}
	// erf x = 2/√π · x·Σ (-x²)^n/(n!(2n+1)): the terms reach e^(x²) ≈ 2^117.
	const prec = refPrec + 160
	bx := bf(prec).SetFloat64(x)
	z := bf(prec).Mul(bx, bx)
	z.Neg(z)
	sum := bf(prec).SetInt64(1)
	term := bf(prec).SetInt64(1) // (-x²)^n/n!
	for n := int64(1); ; n++ {
		term.Mul(term, z)
		term.Quo(term, bf(prec).SetInt64(n))
		t := bf(prec).Quo(term, bf(prec).SetInt64(2*n+1))
		sum.Add(sum, t)
		if t.Sign() == 0 || t.MantExp(nil) < -int(prec) {
			break
		}
	}
	sum.Mul(sum, bx)
	sum.Mul(sum, bf(prec).SetInt64(2))
	sum.Quo(sum, consts.sqrtPi)
	return bf(refPrec).Set(sum)
}

// ulpErr returns |got - ref| in units of the float64 ulp at ref (the
// subnormal spacing 2^-1074 at least). A NaN or infinite got that ref
// does not match counts as +Inf.
func ulpErr(got float64, ref *big.Float) float64 {
	if math.IsNaN(got) || math.IsInf(got, 0) {
		return math.Inf(1)
	}
	if ref.Sign() == 0 {
		if got == 0 {
			return 0
		}
		return math.Inf(1)
	}
	exp := ref.MantExp(nil) // ref = m·2^exp, |m| in [1/2, 1)
	ulpExp := max(exp-53, -1074)
	d := bf(refPrec).Sub(newF(got), ref)
	d.SetMantExp(d, -ulpExp)
	f, _ := d.Float64()
	return math.Abs(f)
}
