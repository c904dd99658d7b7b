package gpu

// Native mode of the packed 16-bit arithmetic (half2.go): each lane
// computed in float64, rounded once to binary16 or bfloat16.

import "math"

// isBF162 reports whether the packed type is BFloat162.
func isBF162[T Packed16](T) bool {
	var z T
	_, ok := any(z).(BFloat162)
	return ok
}

// one2 is 1.0 in both lanes of the format.
func one2(bf bool) uint32 {
	if bf {
		return 0x3f803f80
	}
	return 0x3c003c00
}

func fma2(a, b, c uint32, bf bool) uint32 {
	lo := fma16(uint16(a), uint16(b), uint16(c), bf)
	hi := fma16(uint16(a>>16), uint16(b>>16), uint16(c>>16), bf)
	return uint32(lo) | uint32(hi)<<16
}

// canonNaN16 is the NaN every packed 16-bit instruction returns.
const canonNaN16 = 0x7fff

// fma16 returns x*y+z of one 16-bit lane, rounded once to nearest even.
// The product of two 16-bit floats is exact in float64 (at most 22
// significant bits), the sum is rounded to odd at 53 bits (addOdd), and
// 53 ≥ 11+2 bits makes the final rounding to nearest correct, as in fma32.
func fma16(x, y, z uint16, bf bool) uint16 {
	X, Y, Z := widen16(x, bf), widen16(y, bf), widen16(z, bf)
	p := float64(X * Y) // exact; the conversion forbids fusing
	var s float64
	if math.IsInf(p, 0) || math.IsNaN(p) || math.IsInf(Z, 0) || math.IsNaN(Z) {
		s = p + Z
	} else {
		s = addOdd(p, Z)
	}
	if math.IsNaN(s) {
		return canonNaN16
	}
	return narrow16(s, bf)
}

// addOdd returns p+z rounded to odd at 53 bits: the float64 sum, moved one
// ulp towards the exact sum's remainder (TwoSum) when that is not zero and
// the sum's last bit is even. p and z are finite.
func addOdd(p, z float64) float64 {
	s := p + z
	if math.IsInf(s, 0) {
		return s
	}
	pp := s - z
	zp := s - pp
	t := (p - pp) + (z - zp)
	if t != 0 {
		bits := math.Float64bits(s)
		if bits&1 == 0 {
			if (t > 0) == (s > 0) {
				bits++ // away from zero, towards the tail
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return s
}

// widen16 converts a binary16 (bf false) or bfloat16 value exactly.
func widen16(h uint16, bf bool) float64 {
	if bf {
		return float64(bf16ToFloat32(h))
	}
	return float64(halfToFloat32(h))
}

// narrow16 rounds v (not NaN) to nearest even binary16 or bfloat16,
// overflowing to ±Inf: v is scaled by a power of two so that the format's
// last place is 1, rounded to an integer, and scaled back, all exact, and
// the result, now representable, is converted without a second rounding.
func narrow16(v float64, bf bool) uint16 {
	manBits, minExp, maxFinite := 10, -14, 65504.0
	if bf {
		manBits, minExp, maxFinite = 7, -126, 0x1.fep127
	}
	a := math.Abs(v)
	var sign uint16
	if math.Signbit(v) {
		sign = 0x8000
	}
	if !math.IsInf(a, 0) && a != 0 {
		_, e := math.Frexp(a) // a in [2^(e-1), 2^e)
		ulp := math.Ldexp(1, max(e-1, minExp)-manBits)
		a = math.RoundToEven(a/ulp) * ulp
	}
	switch {
	case a > maxFinite:
		if bf {
			return sign | 0x7f80
		}
		return sign | 0x7c00
	case bf:
		return sign | float32ToBF16(float32(a))
	}
	return sign | float32ToHalf(float32(a))
}
