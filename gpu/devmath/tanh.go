package devmath

// Hyperbolic tangent: Tanh32 and Tanh64.
//
// Near zero tanh x = x + x·z·P(z), z = x², with P minimax (relative) on
// |x| ≤ 0.55 (float64, degree 10) or 0.6 (float32, degree 4); see
// internal/gen/remez.py "tanh64", "tanh32". Above that tanh |x| =
// 1 - 2/(e**2|x| + 1), which is at least 1/2. Tanh64 carries e**2|x| + 1
// and the quotient as double-float pairs, so only the last addition
// rounds; Tanh32 uses a float32 exponential. tanh rounds to ±1 from
// |x| = 22 (float64) and 9.1 (float32) on.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// Tanh32 returns the hyperbolic tangent of x. Error at most 2 ulp over
// all float32 (measured 1.34 ulp on every input). Tanh32(±0) = ±0, ±Inf
// gives ±1 and NaN gives NaN. Pure float32 arithmetic (no hardware
// approximations).
func Tanh32(x float32) float32 {
	a := gpu.Abs(x)
	if a < 0x1p-13 { // tanh x = x after rounding; keeps -0
		return x
	}
	if a < 0.6 {
		z := x * x
		p := float32(-0.006269319448620081)
		p = gpu.FMA(p, z, 0.021111102774739265)
		p = gpu.FMA(p, z, -0.05387398228049278)
		p = gpu.FMA(p, z, 0.13332915306091309)
		p = gpu.FMA(p, z, -0.3333333134651184)
		return gpu.FMA(x*z, p, x)
	}
	if !(a < 9.1) {
		if x != x {
			return x
		}
		return copysign32(1, x)
	}
	return copysign32(1-2/(exp32(2*a)+1), x)
}

// Tanh64 returns the hyperbolic tangent of x. Error at most 1 ulp
// (measured 0.57 ulp). Tanh64(±0) = ±0, ±Inf gives ±1, NaN gives NaN;
// subnormal x gives x.
func Tanh64(x float64) float64 {
	a := gpu.Abs(x)
	if a < 0x1p-27 { // tanh x = x after rounding; keeps -0
		return x
	}
	if a < 0.55 {
		z := x * x
		p := -2.060323545515961e-05
		p = gpu.FMA(p, z, 8.511384897601577e-05)
		p = gpu.FMA(p, z, -0.0002346351996599175)
		p = gpu.FMA(p, z, 0.0005889362155307421)
		p = gpu.FMA(p, z, -0.0014556618653475606)
		p = gpu.FMA(p, z, 0.0035921103833925637)
		p = gpu.FMA(p, z, -0.008863234398196614)
		p = gpu.FMA(p, z, 0.021869488493684794)
		p = gpu.FMA(p, z, -0.05396825396743444)
		p = gpu.FMA(p, z, 0.13333333333332714)
		p = gpu.FMA(p, z, -0.3333333333333333)
		return gpu.FMA(x*z, p, x)
	}
	if !(a < 22) {
		if x != x {
			return x
		}
		return math.Copysign(1, x)
	}
	// 1 - 2/(E+1) with E = e**2a = (y + yl)·2**k and E + 1 = d + de.
	y, yl, k := expParts(2 * a)
	s := math.Float64frombits(uint64(k+1023) << 52)
	eh := y * s
	d := eh + 1
	de := ((eh - d) + 1) + yl*s // Fast2Sum: eh ≥ 3
	q := 2 / d
	// 2/(d+de) = q + qc to first order in de/d, with q's own residual.
	qc := (gpu.FMA(-q, d, 2) - q*de) * (0.5 * q)
	t := 1 - q
	te := (1 - t) - q // Fast2Sum: q ≤ 1/2
	return math.Copysign(t+(te-qc), x)
}

// copysign32 returns |x| with the sign of y.
func copysign32(x, y float32) float32 {
	return math.Float32frombits(math.Float32bits(x)&0x7fffffff | math.Float32bits(y)&0x80000000)
}
