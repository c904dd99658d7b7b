package gpu

// Floating-point conversions of native mode: a correctly rounded float32
// FMA, and float32 to and from IEEE binary16 (Half) and bfloat16.

import "math"

// fma32 returns x*y+z rounded once to float32 (fma.rn.f32).
//
// float32(math.FMA(x, y, z)) would round twice, to float64 and then to
// float32, and the first rounding can create a tie the second breaks the
// wrong way (x*y+z just above a float32 midpoint, rounded to the midpoint
// in float64, then to even). Instead: the product of two float32 is exact in
// float64 (24+24 significant bits), the sum is split exactly into a float64
// head and tail (TwoSum; every float32-derived value is a multiple of
// 2^-298, far above float64's underflow, so nothing is lost), and the head
// is rounded to odd using the tail: when the tail is not zero and the head's
// last bit is 0, the head moves one ulp towards the tail. Rounding to odd
// with 53 ≥ 24+2 bits and then to nearest float32 gives the correctly
// rounded result.
//
// Most sums need none of that: the float32 midpoints (25 significant bits)
// are float64s, so rounding the exact sum to float64 cannot carry it
// across one, only onto one. When s = p+z rounded is not a midpoint and
// lies in float32's normal range, where every float32 keeps 24 bits and
// drops s's low 29, float32(s) is already the correctly rounded result.
// That test is a few operations on s's bits, so native mode's gpu.FMA
// costs a float64 multiply and add and the test where it used to cost a
// TwoSum every time (a SmolLM2-135M decode step natively: 1.87 → 0.8 s).
func fma32(x, y, z float32) float32 {
	s := float64(float64(x)*float64(y)) + float64(z) // the conversion forbids fusing
	// The exponent field minus float32's smallest normal one, unsigned: in
	// range [0, 253] exactly for float32's normal binades.
	if b := math.Float64bits(s); (b>>52&0x7ff)-(1023-126) <= 253 && b&(1<<29-1) != 1<<28 {
		return float32(s)
	}
	return fma32Slow(x, y, z)
}

// fma32Slow is fma32 where s may be a midpoint, or not a normal float32.
func fma32Slow(x, y, z float32) float32 {
	p := float64(float64(x) * float64(y)) // exact; the conversion forbids fusing
	zz := float64(z)
	if s := p + zz; math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s) // an infinite or NaN operand decides the result
	}
	return float32(addOdd(p, zz)) // TwoSum, rounded to odd (native_half2.go)
}

// halfToFloat32 converts the binary16 value with bits h exactly. A NaN keeps
// its sign and payload (shifted into the float32's top mantissa bits).
func halfToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0: // normal: rebias 15 → 127
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal, mant·2^-24: normalise so that bit 10 is the implicit one.
	shift := uint32(0)
	for mant&0x400 == 0 {
		mant <<= 1
		shift++
	}
	return math.Float32frombits(sign | (127-14-shift)<<23 | (mant&0x3ff)<<13)
}

// float32ToHalf rounds f to the nearest binary16, ties to even. Values whose
// magnitude is at least 65520 (the midpoint between the largest Half, 65504,
// and 2^16) become ±Inf; values below 2^-14 round to subnormals or ±0; a
// NaN stays NaN, made quiet, with the top bits of its payload.
func float32ToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	a := b & 0x7fffffff
	switch {
	case a > 0x7f800000: // NaN
		return sign | 0x7e00 | uint16(a>>13)&0x3ff
	case a >= 0x477ff000: // ≥ 65520, or Inf
		return sign | 0x7c00
	case a >= 0x38800000: // ≥ 2^-14: a normal Half
		// Rebias the exponent 127 → 15, then round the mantissa from 23 to
		// 10 bits; a carry out of the mantissa correctly bumps the exponent.
		a -= (127 - 15) << 23
		return sign | uint16((a+0xfff+(a>>13)&1)>>13)
	}
	// Subnormal or zero Half: a multiple of 2^-24, found exactly in float64.
	return sign | uint16(math.RoundToEven(float64(math.Float32frombits(a))*0x1p24))
}

// bf16ToFloat32 converts the bfloat16 value with bits h exactly: they are
// the float32's top 16 bits.
func bf16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// float32ToBF16 rounds f to the nearest bfloat16, ties to even, overflowing
// to ±Inf. A NaN stays NaN: it is made quiet, so that dropping the low
// payload bits cannot turn it into an infinity.
func float32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}
