package devmath

// Sin64 and Cos64.
//
// Reduction (Cody–Waite): k = rint(x·2/π) and r + rlo = x - k·π/2, with
// π/2 in three parts p1 (33 bits), p2 and p3 (53 bits each, about 139 bits
// in all). For |k| < 2^20, k·p1 is exact and so is x - k·p1 (Sterbenz);
// k·p2 is split exactly with an fma and subtracted with TwoSum, so r + rlo
// is x mod π/2 to about 2^-100 absolute even when it cancels to 2^-60.
// Then sin r = r + r·z·S(z) and cos r = 1 - z/2 + z²·C(z), z = r², S and C
// of degree 5 (minimax on |r| ≤ π/4·1.001, internal/gen/remez.py "sin64",
// "cos64"); rlo enters through sin' and cos'.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

const (
	pio2P1 = 0x1.921fb544p+0 // π/2, leading 33 bits
	pio2P2 = 0x1.0b4611a626331p-34
	pio2P3 = 0x1.1701b839a252p-88
	twoOPi = 0x1.45f306dc9c883p-1 // 2/π rounded
	pio2Hi = 0x1.921fb54442d18p+0 // π/2 rounded
	pio2Lo = 0x1.1a62633145c07p-54
	pio4   = 0x1.921fb54442d18p-1
	// trigExact bounds |x| where the reduction is exact (|k| < 2^20).
	trigExact = 0x1.8p+20
)

// Sin64 returns the sine of x radians. Error at most 1 ulp (measured
// 0.74 ulp) for |x| < 1.5·2^20 (about 1.57e6). For 1.5·2^20 ≤ |x| < 2^52
// the reduction is no longer exact: the absolute error is at most 2^-50
// (measured 2^-53), but relative accuracy is lost near the zeros. For
// |x| ≥ 2^52 the result is in [-1, 1] but meaningless (no Payne–Hanek
// reduction). Sin64(±0) = ±0; ±Inf and NaN give NaN.
func Sin64(x float64) float64 {
	return sinCos(x, 0)
}

// Cos64 returns the cosine of x radians, with Sin64's error bounds and
// ranges (measured 0.72 ulp for |x| < 1.5·2^20). Cos64(±Inf) and Cos64(NaN) are NaN.
func Cos64(x float64) float64 {
	return sinCos(x, 1)
}

// sinCos returns sin(x + quarter·π/2).
func sinCos(x float64, quarter int) float64 {
	if x-x != 0 { // ±Inf or NaN
		return math.Float64frombits(0x7ff8000000000001)
	}
	if gpu.Abs(x) < 0x1p-27 { // sin x = x, cos x = 1 after rounding
		if quarter == 0 {
			return x
		}
		return 1
	}
	k := gpu.Floor(x*twoOPi + 0.5)
	a := gpu.FMA(-k, pio2P1, x) // exact for |k| < 2^20
	t := k * pio2P2
	te := gpu.FMA(k, pio2P2, -t)
	// TwoSum: s + se = a - t exactly.
	s := a - t
	bb := s - a
	se := (a - (s - bb)) - (t + bb)
	lo := se - gpu.FMA(k, pio2P3, te)
	r := s + lo
	rlo := lo - (r - s)
	// For |x| ≥ 2^20 or so x·2/π may round to the wrong k: move r back
	// into [-π/4, π/4] (r ∓ pio2Hi is exact, Sterbenz). Beyond about
	// 2^75 the reduction itself is garbage: r = 0 keeps y in [-1, 1].
	if r > pio4 {
		r, rlo, k = r-pio2Hi, rlo-pio2Lo, k+1
	} else if r < -pio4 {
		r, rlo, k = r+pio2Hi, rlo+pio2Lo, k-1
	}
	if !(gpu.Abs(r) < 0.8) {
		r, rlo = 0, 0
	}
	// Quadrant of x + quarter·π/2, from k as a float so that huge k is fine.
	kq := k + float64(quarter)
	q := int(kq - 4*gpu.Floor(kq*0.25))
	z := r * r
	var y float64
	if q&1 == 0 {
		sp := 1.5917680582328622e-10
		sp = gpu.FMA(sp, z, -2.5051125346995475e-08)
		sp = gpu.FMA(sp, z, 2.755731606975747e-06)
		sp = gpu.FMA(sp, z, -0.00019841269836691342)
		sp = gpu.FMA(sp, z, 0.008333333333330901)
		sp = gpu.FMA(sp, z, -0.16666666666666666)
		// sin(r + rlo) = sin r + rlo·cos r, cos r ≈ 1 - z/2.
		y = r + gpu.FMA(r*z, sp, gpu.FMA(-0.5*z, rlo, rlo))
	} else {
		cp := -1.1382388701928087e-11
		cp = gpu.FMA(cp, z, 2.0876142775513684e-09)
		cp = gpu.FMA(cp, z, -2.7557317254312885e-07)
		cp = gpu.FMA(cp, z, 2.4801587298730483e-05)
		cp = gpu.FMA(cp, z, -0.0013888888888887372)
		cp = gpu.FMA(cp, z, 0.041666666666666664)
		// 1 - z/2 with z = r² + ze exactly, then 1 - hz = w + we exactly.
		ze := gpu.FMA(r, r, -z)
		hz := 0.5 * z
		w := 1 - hz
		we := (1 - w) - hz
		// cos(r + rlo) = cos r - rlo·sin r.
		y = w + (we + (gpu.FMA(z*z, cp, -0.5*ze) - r*rlo))
	}
	if q >= 2 {
		return -y
	}
	return y
}
