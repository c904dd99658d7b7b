package emu

// Fast approximate math for the .approx instructions whose cost dominates
// element-wise kernels. PTX ISA §9.7.3.18 allows ex2.approx.f32 a maximum
// relative error of 2^-22 (2 ulp); exp2f32 is accurate to about 2^-42
// before its one rounding to float32, so it agrees with the correctly
// rounded result except, rarely, when that lies within 2^-42 of a tie.

import "math"

// exp2f32 returns 2^x rounded to float32.
func exp2f32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x >= 128:
		return float32(math.Inf(1))
	case x < -151:
		return 0
	}
	xf := float64(x)
	n := math.Floor(xf + 0.5)
	y := (xf - n) * math.Ln2 // |y| <= ln2/2, exact up to the product's rounding
	// e^y by its Taylor series to y^11/11!: the remainder is below 2^-44.
	p := 1 + y*(1+y*(1.0/2+y*(1.0/6+y*(1.0/24+y*(1.0/120+y*(1.0/720+y*(1.0/5040+
		y*(1.0/40320+y*(1.0/362880+y*(1.0/3628800+y*(1.0/39916800)))))))))))
	return float32(p * math.Float64frombits(uint64(int64(n)+1023)<<52))
}
