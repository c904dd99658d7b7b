package gpu_test

// Tests of Half and BFloat16 conversions and the float32 FMA against
// references built independently: float64 scaling and math.RoundToEven for
// the 16-bit formats, exact math/big arithmetic for FMA.

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern/gpu"
)

// format16 describes a 16-bit float format for the reference conversions.
type format16 struct {
	name     string
	mantBits int     // stored mantissa bits
	minExp   int     // exponent of the smallest normal
	maxFin   float64 // largest finite value
	expBits  int
	toF32    func(uint16) float32
	fromF32  func(float32) uint16
}

var (
	halfFormat = format16{"Half", 10, -14, 65504, 5,
		func(h uint16) float32 { return gpu.Half(h).Float32() },
		func(f float32) uint16 { return uint16(gpu.ToHalf(f)) }}
	bf16Format = format16{"BFloat16", 7, -126, math.Ldexp(2-1.0/128, 127), 8,
		func(h uint16) float32 { return gpu.BFloat16(h).Float32() },
		func(f float32) uint16 { return uint16(gpu.ToBFloat16(f)) }}
)

// value returns the exact value of the non-NaN bits h.
func (f format16) value(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	bias := 1 - f.minExp
	e := int(h>>f.mantBits) & (1<<f.expBits - 1)
	m := float64(int(h) & (1<<f.mantBits - 1))
	switch e {
	case 1<<f.expBits - 1:
		return sign * math.Inf(1)
	case 0:
		return sign * math.Ldexp(m, f.minExp-f.mantBits)
	}
	return sign * math.Ldexp(m+math.Ldexp(1, f.mantBits), e-bias-f.mantBits)
}

func (f format16) isNaN(h uint16) bool {
	return int(h>>f.mantBits)&(1<<f.expBits-1) == 1<<f.expBits-1 && h&(1<<f.mantBits-1) != 0
}

// round returns the value of the format nearest to x, ties to even, with
// ±Inf past the largest finite value: x scaled so that the format's
// mantissa is an integer, rounded with math.RoundToEven (all exact in
// float64), scaled back.
func (f format16) round(x float32) float64 {
	a := math.Abs(float64(x))
	if a == 0 || math.IsInf(a, 0) {
		return float64(x)
	}
	_, e := math.Frexp(a) // a = frac·2^e, frac in [0.5, 1)
	e = max(e-1, f.minExp)
	r := math.Ldexp(math.RoundToEven(math.Ldexp(a, f.mantBits-e)), e-f.mantBits)
	if r > f.maxFin {
		r = math.Inf(1)
	}
	return math.Copysign(r, float64(x))
}

func testToFloat32Exhaustive(t *testing.T, f format16) {
	for i := range 1 << 16 {
		h := uint16(i)
		got := f.toF32(h)
		if f.isNaN(h) {
			b := math.Float32bits(got)
			if !math.IsNaN(float64(got)) || b>>31 != uint32(h>>15) || b>>(23-f.mantBits)&(1<<f.mantBits-1) != uint32(h)&(1<<f.mantBits-1) {
				t.Fatalf("%s %#04x: %#08x, want a NaN with the same sign and payload", f.name, h, b)
			}
			continue
		}
		want := f.value(h)
		if float64(got) != want || math.Signbit(float64(got)) != (h&0x8000 != 0) {
			t.Fatalf("%s %#04x: %v, want %v", f.name, h, got, want)
		}
	}
}

func TestHalfToFloat32Exhaustive(t *testing.T) { testToFloat32Exhaustive(t, halfFormat) }
func TestBF16ToFloat32Exhaustive(t *testing.T) { testToFloat32Exhaustive(t, bf16Format) }

// checkFromFloat32 checks one float32 → 16-bit conversion.
func checkFromFloat32(t *testing.T, f format16, x float32) {
	t.Helper()
	got := f.fromF32(x)
	if math.IsNaN(float64(x)) {
		quiet := uint16(1) << (f.mantBits - 1)
		if !f.isNaN(got) || got&quiet == 0 || got>>15 != uint16(math.Float32bits(x)>>31) {
			t.Fatalf("%s(%#08x) = %#04x, want a quiet NaN of the same sign", f.name, math.Float32bits(x), got)
		}
		return
	}
	want := f.round(x)
	if f.isNaN(got) || f.value(got) != want || math.Signbit(f.value(got)) != math.Signbit(want) {
		t.Fatalf("%s(%v = %#08x) = %#04x (%v), want %v", f.name, x, math.Float32bits(x), got, f.value(got), want)
	}
}

// testFromFloat32 checks every rounding boundary of the format (each value,
// the midpoint to its successor and the float32 neighbours of both), a
// sweep over all float32 exponents, random values, round trips and NaNs.
func testFromFloat32(t *testing.T, f format16) {
	neighbours := func(x float32) [3]float32 {
		return [3]float32{math.Nextafter32(x, float32(math.Inf(-1))), x, math.Nextafter32(x, float32(math.Inf(1)))}
	}
	for i := range 1 << 15 {
		h := uint16(i)
		if f.isNaN(h) || math.IsInf(f.value(h), 0) {
			continue
		}
		v := f.value(h)
		next := f.value(h + 1) // the successor; past the largest finite value, Inf
		if math.IsInf(next, 0) {
			next = f.maxFin + math.Ldexp(1, int(math.Log2(f.maxFin))-f.mantBits)
		}
		mid := float32((v + next) / 2) // exact: one more bit than the format
		for _, sign := range []float32{1, -1} {
			for _, x := range neighbours(float32(v)) {
				checkFromFloat32(t, f, sign*x)
			}
			for _, x := range neighbours(mid) {
				checkFromFloat32(t, f, sign*x)
			}
		}
		// Round trip: every non-NaN value converts back to itself.
		for _, hs := range []uint16{h, h | 0x8000} {
			if got := f.fromF32(f.toF32(hs)); got != hs {
				t.Fatalf("%s round trip %#04x → %v → %#04x", f.name, hs, f.toF32(hs), got)
			}
		}
	}
	for b := uint32(0); b < 1<<31; b += 8191 {
		checkFromFloat32(t, f, math.Float32frombits(b))
		checkFromFloat32(t, f, -math.Float32frombits(b))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		checkFromFloat32(t, f, math.Float32frombits(r.Uint32()))
	}
	for _, b := range []uint32{0x7f800001, 0xff800001, 0x7fc00000, 0x7fffffff, 0x7f802000, 0xffc00001} {
		checkFromFloat32(t, f, math.Float32frombits(b))
	}
	for _, x := range []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32} {
		checkFromFloat32(t, f, x)
	}
}

func TestFloat32ToHalf(t *testing.T) { testFromFloat32(t, halfFormat) }
func TestFloat32ToBF16(t *testing.T) { testFromFloat32(t, bf16Format) }

func TestHalfBoundaries(t *testing.T) {
	for _, c := range []struct {
		x    float32
		want uint16
	}{
		{65504, 0x7bff},
		{65519.99, 0x7bff},
		{65520, 0x7c00}, // the tie above the largest Half goes to Inf
		{-65520, 0xfc00},
		{0x1p-14, 0x0400},
		{0x1p-24, 0x0001},
		{0x1p-25, 0x0000}, // the tie between 0 and the smallest subnormal: even
		{0x1.8p-25, 0x0001},
		{0x1.8p-24, 0x0002}, // tie between subnormals 1 and 2: even
		{1 + 0x1p-11, 0x3c00},
		{1 + 0x1.8p-10, 0x3c02}, // tie between 0x3c01 and 0x3c02: even
	} {
		if got := uint16(gpu.ToHalf(c.x)); got != c.want {
			t.Errorf("ToHalf(%v) = %#04x, want %#04x", c.x, got, c.want)
		}
	}
	for _, c := range []struct {
		bits uint32
		want uint16
	}{
		{0x3f808000, 0x3f80}, // tie, even below
		{0x3f818000, 0x3f82}, // tie, even above
		{0x7f7fffff, 0x7f80}, // MaxFloat32 rounds to Inf
		{0x7f7f7fff, 0x7f7f},
		{0x7f800001, 0x7fc0}, // a signalling NaN with only low payload bits stays NaN
	} {
		if got := uint16(gpu.ToBFloat16(math.Float32frombits(c.bits))); got != c.want {
			t.Errorf("ToBFloat16(%#08x) = %#04x, want %#04x", c.bits, got, c.want)
		}
	}
}

// fmaRef returns x*y+z rounded once, computed exactly with math/big.
func fmaRef(x, y, z float32) float32 {
	const prec = 1000 // the exact sum needs at most about 600 bits
	bx := new(big.Float).SetPrec(prec).SetFloat64(float64(x))
	by := new(big.Float).SetPrec(prec).SetFloat64(float64(y))
	bz := new(big.Float).SetPrec(prec).SetFloat64(float64(z))
	s := new(big.Float).SetPrec(prec).Mul(bx, by)
	s.Add(s, bz)
	r, _ := s.Float32()
	if r == 0 && s.Sign() == 0 {
		// An exact zero: IEEE gives -0 only for (-0) + (-0).
		p := float64(x) * float64(y)
		if math.Signbit(p) && math.Signbit(float64(z)) {
			return float32(math.Copysign(0, -1))
		}
		return 0
	}
	return r
}

func checkFMA(t *testing.T, x, y, z float32) bool {
	t.Helper()
	got, want := gpu.FMA(x, y, z), fmaRef(x, y, z)
	if math.Float32bits(got) != math.Float32bits(want) {
		t.Fatalf("FMA(%v, %v, %v) = %v, want %v", x, y, z, got, want)
	}
	naive := float32(math.FMA(float64(x), float64(y), float64(z)))
	return math.Float32bits(naive) != math.Float32bits(want)
}

func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	finite := func() float32 {
		for {
			if f := math.Float32frombits(r.Uint32()); !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
				return f
			}
		}
	}
	// scaled returns ±(2^(bits-1) + a random (bits-1)-bit integer)·2^e.
	scaled := func(bits, e int) float32 {
		m := float64(1<<(bits-1) + r.IntN(1<<(bits-1)))
		if r.IntN(2) == 0 {
			m = -m
		}
		return float32(math.Ldexp(m, e))
	}
	// Random bit patterns: mostly one operand dominates; covers overflow,
	// underflow and subnormals.
	for range 100000 {
		checkFMA(t, finite(), finite(), finite())
	}
	// Products and addends of similar size: cancellation.
	for range 100000 {
		x, y := scaled(24, r.IntN(40)-20), scaled(24, r.IntN(40)-20)
		p := x * y
		z := -p * float32(1+math.Ldexp(r.Float64()-0.5, -r.IntN(30)))
		checkFMA(t, x, y, z)
	}
	// Adversarial: 13-bit factors make a 26-bit product that is often a
	// float32 midpoint, nudged by a z below float64's resolution; here
	// rounding to float64 first breaks the tie the wrong way.
	naiveWrong := 0
	for range 100000 {
		x, y := scaled(13, r.IntN(20)-10), scaled(13, r.IntN(20)-10)
		z := float32(math.Ldexp(1, -60-r.IntN(60)))
		if r.IntN(2) == 0 {
			z = -z
		}
		if checkFMA(t, x, y, z) {
			naiveWrong++
		}
	}
	if naiveWrong == 0 {
		t.Error("the adversarial inputs never catch double rounding: the test is too weak")
	}
	t.Logf("float32(math.FMA) was wrong on %d of 100000 adversarial inputs", naiveWrong)
	// Underflow to subnormal float32 results.
	for range 20000 {
		x, y := scaled(24, -75-r.IntN(10)), scaled(24, -75-r.IntN(10))
		checkFMA(t, x, y, scaled(24, -150+r.IntN(20)))
	}
}

func TestFMA32Special(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct{ x, y, z, want float32 }{
		{1 + 0x1p-12, 1 + 0x1p-12, 0x1p-80, 1 + 0x1p-11 + 0x1p-23}, // the double-rounding case
		{1 + 0x1p-12, 1 + 0x1p-12, -0x1p-80, 1 + 0x1p-11},
		{0x1p100, 0x1p100, -math.MaxFloat32, inf}, // overflow
		{inf, 2, 1, inf},
		{inf, 0, 1, nan},
		{inf, 1, -inf, nan},
		{nan, 1, 1, nan},
		{1, 1, -1, 0},
		{negZero, 1, negZero, negZero},
		{negZero, 1, 0, 0},
		{3, 0x1p-149, 0, 3 * 0x1p-149},
		{0x1p-100, 0x1p-100, 0, 0},
	} {
		got := gpu.FMA(c.x, c.y, c.z)
		same := math.Float32bits(got) == math.Float32bits(c.want) || math.IsNaN(float64(got)) && math.IsNaN(float64(c.want))
		if !same {
			t.Errorf("FMA(%v, %v, %v) = %v, want %v", c.x, c.y, c.z, got, c.want)
		}
	}
}

// BenchmarkFMA32 times native mode's float32 FMA on ordinary operands
// (the fast path) and on double-rounding ties (the TwoSum path).
func BenchmarkFMA32(b *testing.B) {
	for _, c := range []struct {
		name    string
		x, y, z float32
	}{{"ordinary", 1.25, 0.3, 0.7}, {"tie", 1 + 0x1p-12, 1 + 0x1p-12, 0x1p-80}} {
		b.Run(c.name, func(b *testing.B) {
			acc := float32(0)
			for range b.N {
				acc += gpu.FMA(c.x, c.y, c.z)
			}
			benchSink = acc
		})
	}
}

var benchSink float32
