package emu

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

var modes = []rmode{rnRN, rnRZ, rnRM, rnRP}

var modeNames = [...]string{"rn", "rz", "rm", "rp"}

// refRound rounds the exact value x to a binary format with man explicit
// mantissa bits and exponent bias, in mode m, using math/big: the
// reference the fast paths in round.go are checked against. ok is false
// when the result would be subnormal with less than one bit of precision
// (those cases are tested by hand).
func refRound(x *big.Float, man, bias int, m rmode) (float64, bool) {
	if x.Sign() == 0 {
		f, _ := x.Float64()
		return f, true
	}
	e := x.MantExp(nil) - 1 // |x| = 1.f * 2^e
	prec := man + 1
	if minE := 1 - bias; e < minE {
		prec -= minE - e
	}
	if prec < 1 {
		return 0, false
	}
	z := new(big.Float).SetPrec(uint(prec)).SetMode(bigModes[m]).Set(x)
	maxF := math.Ldexp(2-math.Ldexp(1, -man), bias)
	f, _ := z.Float64() // exact: z has at most 24 significant bits
	if math.Abs(f) > maxF {
		toInf := m == rnRN || m == rnRP && f > 0 || m == rnRM && f < 0
		if toInf {
			return math.Copysign(math.Inf(1), f), true
		}
		return math.Copysign(maxF, f), true
	}
	return f, true
}

func refRound32(x *big.Float, m rmode) (float32, bool) {
	f, ok := refRound(x, 23, 127, m)
	return float32(f), ok
}

// randF32 returns a random finite float32 with exponent in [lo, hi].
func randF32(r *rand.Rand, lo, hi int) float32 {
	man := r.Uint32() & (1<<23 - 1)
	// Favour mantissas with long runs of ones or zeros: they produce ties
	// and near-ties.
	switch r.Intn(4) {
	case 0:
		man |= 1<<23 - 1<<uint(r.Intn(23))
	case 1:
		man &= 1<<uint(r.Intn(23)) - 1
	}
	f := math.Ldexp(1+float64(man)/(1<<23), lo+r.Intn(hi-lo+1))
	if r.Intn(2) == 0 {
		f = -f
	}
	return float32(f)
}

func exactFMA(a, b, c float64) *big.Float {
	p := new(big.Float).SetPrec(2000).Mul(big.NewFloat(a), big.NewFloat(b))
	return p.Add(p, big.NewFloat(c))
}

func same32(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// doubleRoundFMA is a case where rounding a*b+c first to float64 and then
// to float32 is wrong: the exact value is 1 + 2^-24 + 2^-60, just above
// the midpoint between 1 and 1+2^-23, but float64 rounds it onto the
// midpoint, which then rounds to even (1).
var doubleRoundFMA = [3]float32{
	float32(math.Ldexp(1+0x1p-18, -12)),
	float32(-math.Ldexp(1-0x1p-18, -12)),
	1 + 0x1p-23,
}

func TestFMA32DoubleRounding(t *testing.T) {
	a, b, c := doubleRoundFMA[0], doubleRoundFMA[1], doubleRoundFMA[2]
	naive := float32(math.FMA(float64(a), float64(b), float64(c)))
	want := float32(1 + 0x1p-23)
	if naive == want {
		t.Fatalf("the constructed case does not double-round (naive = %v)", naive)
	}
	if got := fma32(a, b, c, rnRN); got != want {
		t.Errorf("fma32 = %.10g, want %.10g (naive double rounding gives %.10g)", got, want, naive)
	}
}

func TestFMA32MatchesBig(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	naiveWrong := 0
	for i := 0; i < 200000; i++ {
		a, b := randF32(r, -40, 40), randF32(r, -40, 40)
		pe := math.Ilogb(float64(a) * float64(b))
		c := randF32(r, pe-30, pe+30)
		if i%7 == 0 { // subnormal results
			a, b, c = randF32(r, -80, -60), randF32(r, -80, -60), randF32(r, -149, -126)
		}
		x := exactFMA(float64(a), float64(b), float64(c))
		for _, m := range modes {
			want, ok := refRound32(x, m)
			if !ok {
				continue
			}
			if got := fma32(a, b, c, m); !same32(got, want) {
				t.Fatalf("fma.%s(%g, %g, %g) = %g, want %g", modeNames[m], a, b, c, got, want)
			}
			if m == rnRN && float32(math.FMA(float64(a), float64(b), float64(c))) != want {
				naiveWrong++
			}
		}
	}
	t.Logf("naive float32(math.FMA) was wrong in %d cases", naiveWrong)
}

func TestArith32MatchesBig(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 100000; i++ {
		a, b := randF32(r, -60, 60), randF32(r, -60, 60)
		if i%5 == 0 {
			a, b = randF32(r, -149, -120), randF32(r, -149, -120)
		}
		fa, fb := big.NewFloat(float64(a)), big.NewFloat(float64(b))
		sum := new(big.Float).SetPrec(2000).Add(fa, fb)
		prod := new(big.Float).SetPrec(2000).Mul(fa, fb)
		quo := new(big.Float).SetPrec(200).SetMode(big.ToZero).Quo(fa, fb)
		// A truncated quotient at 200 bits rounds like the exact one unless
		// it is exact, which Quo reports through its accuracy.
		for _, m := range modes {
			want, ok := refRound32(sum, m)
			if sum.Sign() == 0 && m == rnRM && a != 0 {
				want = float32(math.Copysign(0, -1)) // IEEE 754: x + (-x) is -0 rounding down
			}
			if ok && !same32(add32(a, b, m), want) {
				t.Fatalf("add.%s(%g, %g) = %g, want %g", modeNames[m], a, b, add32(a, b, m), want)
			}
			if want, ok := refRound32(prod, m); ok && !same32(mul32(a, b, m), want) {
				t.Fatalf("mul.%s(%g, %g) = %g, want %g", modeNames[m], a, b, mul32(a, b, m), want)
			}
			if want, ok := refRound32(quo, m); ok && !same32(div32(a, b, m), want) {
				t.Fatalf("div.%s(%g, %g) = %g, want %g", modeNames[m], a, b, div32(a, b, m), want)
			}
			if a > 0 {
				sq := new(big.Float).SetPrec(200).SetMode(big.ToZero).Sqrt(fa)
				if want, ok := refRound32(sq, m); ok && !same32(sqrt32(a, m), want) {
					t.Fatalf("sqrt.%s(%g) = %g, want %g", modeNames[m], a, sqrt32(a, m), want)
				}
			}
		}
	}
}

func TestArith64Directed(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	rnd := func() float64 {
		f := math.Ldexp(1+r.Float64(), r.Intn(200)-100)
		if r.Intn(2) == 0 {
			f = -f
		}
		return f
	}
	for i := 0; i < 50000; i++ {
		a, b, c := rnd(), rnd(), rnd()
		fa, fb, fc := big.NewFloat(a), big.NewFloat(b), big.NewFloat(c)
		for _, m := range modes {
			z := func() *big.Float { return new(big.Float).SetPrec(53).SetMode(bigModes[m]) }
			check := func(name string, got float64, want *big.Float) {
				w, _ := want.Float64()
				if got != w {
					t.Fatalf("%s.%s(%g, %g, %g) = %g, want %g", name, modeNames[m], a, b, c, got, w)
				}
			}
			check("add", add64(a, b, m), z().Add(fa, fb))
			check("mul", mul64(a, b, m), z().Mul(fa, fb))
			check("div", div64(a, b, m), z().Quo(fa, fb))
			// big.Float.Sqrt is not exactly rounded in every mode; round a
			// 200-bit truncation instead.
			sq := new(big.Float).SetPrec(200).SetMode(big.ToZero).Sqrt(new(big.Float).Abs(fa))
			check("sqrt", sqrt64(math.Abs(a), m), z().Set(sq))
			check("fma", fma64(a, b, c, m), z().Add(new(big.Float).SetPrec(106).Mul(fa, fb), fc))
		}
	}
}

func TestNarrowHalfMatchesBig(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 100000; i++ {
		x := math.Ldexp(1+r.Float64(), r.Intn(60)-30)
		if r.Intn(2) == 0 {
			x = -x
		}
		for _, m := range modes {
			for _, f := range []struct {
				name      string
				fm        ffmt
				man, bias int
			}{{"f16", fmtF16, 10, 15}, {"bf16", fmtBF16, 7, 127}} {
				want, ok := refRound(new(big.Float).SetFloat64(x), f.man, f.bias, m)
				if !ok {
					continue
				}
				if got := widen(narrow(x, f.fm, m), f.fm); got != want {
					t.Fatalf("cvt.%s.%s(%g) = %g, want %g", modeNames[m], f.name, x, got, want)
				}
			}
		}
	}
	// Hand-checked edges: f16 overflow, the smallest subnormal, ties.
	cases := []struct {
		x    float64
		m    rmode
		want uint32
	}{
		{65504, rnRN, 0x7bff},
		{65520, rnRN, 0x7c00},   // the midpoint to 2^16 rounds to infinity
		{65520, rnRZ, 0x7bff},   // toward zero stays finite
		{-1e9, rnRP, 0xfbff},    // toward +inf: -max
		{0x1p-24, rnRN, 0x0001}, // smallest subnormal
		{0x1p-25, rnRN, 0x0000}, // half of it: ties to even (0)
		{0x1.8p-25, rnRN, 0x0001},
		{0x1p-26, rnRP, 0x0001},
		{-0x1p-26, rnRM, 0x8001},
		{1 + 0x1p-11, rnRN, 0x3c00}, // tie between 1 and 1+2^-10: even
		{1 + 3*0x1p-11, rnRN, 0x3c02},
		{math.NaN(), rnRN, 0x7fff},
		{math.Inf(-1), rnRZ, 0xfc00},
	}
	for _, c := range cases {
		if got := narrow(c.x, fmtF16, c.m); got != c.want {
			t.Errorf("narrow(%g, f16, %s) = %#04x, want %#04x", c.x, modeNames[c.m], got, c.want)
		}
	}
}

func TestIntToFloat(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	for i := 0; i < 50000; i++ {
		v := r.Uint64() >> uint(r.Intn(64))
		if r.Intn(3) == 0 {
			v |= 1<<uint(r.Intn(30)) - 1 // long runs of ones: ties and near ties
		}
		for _, src := range []dtype{tU64, tS64} {
			var x *big.Float
			if src == tS64 {
				x = new(big.Float).SetInt64(int64(v))
			} else {
				x = new(big.Float).SetUint64(v)
			}
			for _, m := range modes {
				want32, _ := refRound32(x, m)
				if got := roundF32(intToFloat(v, src, m, false), m); got != want32 {
					t.Fatalf("cvt.%s.f32.%s(%d) = %g, want %g", modeNames[m], src, v, got, want32)
				}
				want64, _ := new(big.Float).SetPrec(53).SetMode(bigModes[m]).Set(x).Float64()
				if got := intToFloat(v, src, m, true); got != want64 {
					t.Fatalf("cvt.%s.f64.%s(%d) = %g, want %g", modeNames[m], src, v, got, want64)
				}
			}
		}
	}
}

func TestFloatToInt(t *testing.T) {
	cases := []struct {
		x    float64
		t    dtype
		m    rmode
		want uint64
	}{
		{2.5, tS32, rnRN, 2},
		{3.5, tS32, rnRN, 4},
		{-2.5, tS32, rnRN, uint64(0xfffffffe)},
		{-2.5, tS32, rnRZ, uint64(0xfffffffe)},
		{-2.5, tS32, rnRM, uint64(0xfffffffd)},
		{-2.5, tS32, rnRP, uint64(0xfffffffe)},
		{2.1, tS32, rnRP, 3},
		{1e10, tS32, rnRZ, 0x7fffffff},
		{-1e10, tS32, rnRZ, 0x80000000},
		{math.NaN(), tS32, rnRN, 0},
		{math.Inf(1), tU32, rnRN, 0xffffffff},
		{-3, tU32, rnRN, 0},
		{300, tU8, rnRZ, 255},
		{-200, tS8, rnRZ, 0x80},
		{1e30, tU64, rnRZ, math.MaxUint64},
		{-1e30, tS64, rnRZ, 1 << 63},
		{0x1p63, tS64, rnRZ, 1<<63 - 1},
		{0x1p63, tU64, rnRZ, 1 << 63},
	}
	for _, c := range cases {
		if got := floatToInt(c.x, c.t, c.m); got != c.want {
			t.Errorf("cvt.%si.%s(%g) = %#x, want %#x", modeNames[c.m], c.t, c.x, got, c.want)
		}
	}
}
