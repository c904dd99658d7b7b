package devmath

// Exponentials: Exp64, Exp264, and exp32 (float32 e**x for Tanh32).
//
// e**x = 2**k · e**r with k = rint(x/ln 2) and r = x - k·ln 2, reduced with
// ln 2 in two parts, the first with 42 significant bits so that x - k·hi is
// exact for |k| < 2^11. e**r - 1 on |r| ≤ ln2/2 is r + r²·Q(r), Q of
// degree 9 (minimax, internal/gen/remez.py "exp64"). 2**k is applied as
// two normal powers of two, so the last multiply is the only rounding when
// the result is subnormal or overflows.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

const (
	inf64   = 0x7ff0000000000000 // bits of +Inf
	ln2Hi42 = 0x1.62e42fefa38p-1 // ln 2, leading 42 bits
	ln2Lo42 = 0x1.ef35793c7673p-45
	ln2Hi   = 0x1.62e42fefa39efp-1 // ln 2 rounded to float64
	ln2Lo   = 0x1.abc9e3b39803fp-56
	invLn2  = 0x1.71547652b82fep+0 // 1/ln 2 rounded
)

// Exp64 returns e**x. Error at most 1 ulp (measured 0.66 ulp; subnormal
// results are within 1 ulp of the subnormal spacing 2^-1074).
// Exp64(+Inf) = +Inf, Exp64(-Inf) = 0, NaN gives NaN; it overflows to
// +Inf above about 709.78 and underflows to 0 below about -745.13.
func Exp64(x float64) float64 {
	if !(x > -746) {
		if x != x {
			return x
		}
		return 0
	}
	if x > 709.8 {
		return math.Float64frombits(inf64)
	}
	y, _, k := expParts(x)
	return scale2(y, k)
}

// expParts returns y, yl and k with e**x = (y + yl)·2**k, y + yl = y
// rounded, |y - 1| ≤ 0.42, for |x| < 1100.
func expParts(x float64) (y, yl float64, k int) {
	kf := gpu.Floor(x*invLn2 + 0.5)
	r := gpu.FMA(-kf, ln2Hi42, x) // exact: k·hi has ≤ 53 bits, Sterbenz
	rr := gpu.FMA(-kf, ln2Lo42, r)
	rlo := (r - rr) - kf*ln2Lo42
	y, yl = expCore(rr, rlo)
	return y, yl, int(kf)
}

// Exp264 returns 2**x. Error at most 1 ulp (measured 0.68 ulp); exact for
// integer x. Overflows to +Inf for x ≥ 1024 and underflows to 0 below
// -1075; special values as Exp64.
func Exp264(x float64) float64 {
	if !(x > -1080) {
		if x != x {
			return x
		}
		return 0
	}
	if x >= 1024 {
		return math.Float64frombits(inf64)
	}
	k := gpu.Floor(x + 0.5)
	r := x - k // exact, |r| ≤ 1/2
	// r·ln 2 as rr + rlo.
	rr := r * ln2Hi
	rlo := gpu.FMA(r, ln2Hi, -rr) + r*ln2Lo
	y, _ := expCore(rr, rlo)
	return scale2(y, int(k))
}

// expCore returns e**(r+rlo) as y + yl (y = the sum rounded) for
// |r| ≤ ln2/2 + 1e-4 and |rlo| ≤ 2^-50·|r|: 1 + r is summed exactly and
// the rest, e**r - 1 - r = r²·Q(r) (Q minimax, relative error 2^-52,
// remez.py "exp64") plus rlo·e**r, is added to its low part.
func expCore(r, rlo float64) (y, yl float64) {
	q := 2.506817585088902e-08
	q = gpu.FMA(q, r, 2.76200703373979e-07)
	q = gpu.FMA(q, r, 2.7557355530990544e-06)
	q = gpu.FMA(q, r, 2.4801521346579706e-05)
	q = gpu.FMA(q, r, 0.00019841269784606666)
	q = gpu.FMA(q, r, 0.0013888888917170368)
	q = gpu.FMA(q, r, 0.008333333333356232)
	q = gpu.FMA(q, r, 0.04166666666662425)
	q = gpu.FMA(q, r, 0.16666666666666644)
	q = gpu.FMA(q, r, 0.5000000000000001)
	h := 1 + r
	l := (1 - h) + r // exact: |r| < 1
	l += gpu.FMA(r*r, q, gpu.FMA(rlo, r, rlo))
	y = h + l
	return y, l - (y - h)
}

// scale2 returns y·2**k for |y| in [1/2, 2] and -1100 < k < 1100, with a
// single rounding: y·2**(k/2) is exact, the second multiply rounds.
func scale2(y float64, k int) float64 {
	k1 := k >> 1
	s1 := math.Float64frombits(uint64(k1+1023) << 52)
	s2 := math.Float64frombits(uint64(k-k1+1023) << 52)
	return y * s1 * s2
}

// exp32 returns e**x for float32 x in [0, 88] with error about 1 ulp
// (ln 2 in two parts, the first with 16 bits, so x - k·hi is exact for
// k < 2^8; Q of degree 4, remez.py "exp32").
func exp32(x float32) float32 {
	const ln2Hi32, ln2Lo32 = 0x1.62e4p-1, 0x1.7f7d1cp-20
	k := gpu.Floor(x*0x1.715476p+0 + 0.5)
	r := gpu.FMA(-k, ln2Hi32, x)
	r = gpu.FMA(-k, ln2Lo32, r)
	q := float32(0.0013901356142014265)
	q = gpu.FMA(q, r, 0.008363313041627407)
	q = gpu.FMA(q, r, 0.04166685417294502)
	q = gpu.FMA(q, r, 0.16666576266288757)
	q = gpu.FMA(q, r, 0.5)
	p := gpu.FMA(r*r, q, r)
	return (1 + p) * math.Float32frombits(uint32(int32(k)+127)<<23)
}
