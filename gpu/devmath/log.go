package devmath

// Logarithms: Log64 and Log264.
//
// x = 2**e · m with m in [√½, √2), f = m - 1 (exact), and
// log(1+f) = 2·atanh(s) = f - s·(f - R(s²)), s = f/(2+f), where
// R(z) = Σ 2zⁿ/(2n+1) is z times a degree-6 minimax polynomial
// (internal/gen/remez.py "log64"). The correction c = s·(f - R) is at most
// a sixth of log(1+f), so its rounding errors are damped; f and e·ln 2
// are summed exactly (Fast2Sum) before the correction is added.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

const sqrt2 = 0x1.6a09e667f3bcdp+0

// Log64 returns the natural logarithm of x. Error at most 1 ulp (measured
// 0.70 ulp). Log64(1) = +0, Log64(±0) = -Inf, Log64(+Inf) = +Inf, and x < 0
// or NaN gives NaN. Subnormal x is handled.
func Log64(x float64) float64 {
	if !(x > 0) || x > math.MaxFloat64 {
		return logSpecial(x)
	}
	e, f, c := logParts(x)
	hi := e * ln2Hi42 // exact for |e| < 2^11
	sum := hi + f
	err := f - (sum - hi) // exact: |hi| ≥ |f| unless hi = 0
	return sum + (err + gpu.FMA(e, ln2Lo42, -c))
}

// Log264 returns the base-2 logarithm of x. Error at most 1 ulp (measured
// 0.71 ulp); exact for powers of two. Special values as Log64.
func Log264(x float64) float64 {
	if !(x > 0) || x > math.MaxFloat64 {
		return logSpecial(x)
	}
	e, f, c := logParts(x)
	const invLn2Lo = 0x1.777d0ffda0d24p-56
	p := f * invLn2
	tail := gpu.FMA(f, invLn2, -p) + gpu.FMA(f, invLn2Lo, -c*invLn2)
	sum := e + p
	err := p - (sum - e) // exact: |e| ≥ 1 > |p| unless e = 0
	return sum + (err + tail)
}

// logSpecial returns log(x) for x that is not positive and finite.
func logSpecial(x float64) float64 {
	switch {
	case x == 0:
		return -math.Float64frombits(inf64)
	case x > 0: // +Inf
		return x
	}
	return math.Float64frombits(0x7ff8000000000001) // x < 0 or NaN
}

// logParts returns e, f and c with log(x) = e·ln 2 + f - c for finite
// x > 0: f = m - 1 exactly for x = 2**e·m, m in [√½, √2), and c the
// correction that turns f into log(1+f).
func logParts(x float64) (e, f, c float64) {
	b := math.Float64bits(x)
	bias := 1023
	if b < 1<<52 { // subnormal
		b = math.Float64bits(x * 0x1p54)
		bias += 54
	}
	ei := int(b>>52) - bias
	m := math.Float64frombits(b&(1<<52-1) | 1023<<52)
	if m > sqrt2 {
		m *= 0.5
		ei++
	}
	f = m - 1
	s := f / (2 + f)
	z := s * s
	r := 0.14617011516579628
	r = gpu.FMA(r, z, 0.15331673012020855)
	r = gpu.FMA(r, z, 0.18182890700129847)
	r = gpu.FMA(r, z, 0.2222221111128331)
	r = gpu.FMA(r, z, 0.28571428626134027)
	r = gpu.FMA(r, z, 0.39999999999899116)
	r = gpu.FMA(r, z, 0.666666666666667)
	c = s * gpu.FMA(-z, r, f)
	return float64(ei), f, c
}
