package devmath_test

// Accuracy tests: each routine against a reference, over dense random
// samples across magnitudes (log-uniform exponents, both signs), uniform
// samples where the function is interesting, and listed boundary values.
// float64 routines are checked against the math/big references of
// ref_test.go, float32 ones against float64 math (whose own error is
// ~2^-29 float32 ulp). Each table entry's bound is the one documented on
// the routine; the test fails above it and logs the measured maximum.

import (
	"flag"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern/gpu/devmath"
)

var exhaustive = flag.Bool("exhaustive", false, "check every float32 input (slow)")

func inf(s int) float64 { return math.Inf(s) }

// logU returns ±2^e with e uniform in [lo, hi).
func logU(r *rand.Rand, lo, hi float64) float64 {
	x := math.Exp2(lo + (hi-lo)*r.Float64())
	if r.IntN(2) == 0 {
		x = -x
	}
	return x
}

func uniform(r *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }

type case64 struct {
	name  string
	f     func(float64) float64
	ref   func(float64) *big.Float
	bound float64 // ulp
	gen   func(r *rand.Rand) float64
	edges []float64
	pos   bool // defined for x > 0 only: edges are not negated
}

var cases64 = []case64{
	{"Exp64", devmath.Exp64, refExp, 1, func(r *rand.Rand) float64 {
		if r.IntN(2) == 0 {
			return logU(r, -70, 9.48)
		}
		return uniform(r, -746, 710)
	}, []float64{0, 1, -1, 0x1p-60, -0x1p-60, 709.78, 709.782712893383973096, 709.7827128933841, 709.79,
		-708.39, -708.4, -745.1, -745.13, -745.1332191019411, -745.1332191019412, -745.2, 0.5 * math.Ln2, -0.5 * math.Ln2}, false},
	{"Exp264", devmath.Exp264, refExp2, 1, func(r *rand.Rand) float64 {
		if r.IntN(2) == 0 {
			return logU(r, -70, 10.01)
		}
		return uniform(r, -1080, 1025)
	}, []float64{0, 1, -1, 0.5, -0.5, 0x1p-60, 1023, 1023.5, 1023.9999999999999, 1024, -1022, -1022.5, -1074, -1074.5,
		-1075, -1074.9999999999999, -1075.0000000000002, -1076}, false},
	{"Log64", devmath.Log64, func(x float64) *big.Float { return refLog(x, false) }, 1, genLog,
		[]float64{1, 2, 0.5, math.E, 10, math.Sqrt2, math.Nextafter(math.Sqrt2, 2), math.Sqrt2 / 2, math.Nextafter(1, 2), math.Nextafter(1, 0),
			math.MaxFloat64, math.SmallestNonzeroFloat64, 0x1p-1022, 0x1.fffffffffffffp-1023, 0x1p-1060}, true},
	{"Log264", devmath.Log264, func(x float64) *big.Float { return refLog(x, true) }, 1, genLog,
		[]float64{1, 2, 0.5, 3, 0x1p-1074, 0x1p1023, math.Nextafter(1, 2), math.Nextafter(1, 0), math.MaxFloat64,
			math.Sqrt2, math.Nextafter(math.Sqrt2, 2), 0x1p-1022, 0x1.fffffffffffffp-1023}, true},
	{"Sin64", devmath.Sin64, func(x float64) *big.Float { return refSinCos(x, false) }, 1, genTrig, trigEdges(), false},
	{"Cos64", devmath.Cos64, func(x float64) *big.Float { return refSinCos(x, true) }, 1, genTrig, trigEdges(), false},
	{"Tanh64", devmath.Tanh64, refTanh, 1, func(r *rand.Rand) float64 {
		if r.IntN(2) == 0 {
			return logU(r, -1074, 5)
		}
		return uniform(r, -25, 25)
	}, []float64{0x1p-1074, 0x1p-1022, 0x1p-30, 0.5499999999999999, 0.55, 0.6, 1, 19, 19.1, 21.99, 22, 30, -0.55, -22}, false},
	{"Erf64", devmath.Erf64, refErf, 1, func(r *rand.Rand) float64 {
		if r.IntN(2) == 0 {
			return logU(r, -1074, 3)
		}
		return uniform(r, -7, 7)
	}, []float64{0x1p-1074, 0x1p-1022, 0x1p-30, 0.6249999999999999, 0.625, 1.2499999999999998, 1.25, 0.9999999999999999, 1, 1.0000000000000002, 2, 3, 5.9, 5.999999999999999, 6, 6.5, 9, 10, -1, -6}, false},
}

// genLog draws positive floats with uniform random bits (every exponent
// equally likely, subnormals included) or close to 1.
func genLog(r *rand.Rand) float64 {
	switch r.IntN(3) {
	case 0:
		return 1 + logU(r, -60, -1)
	case 1:
		return math.Float64frombits(r.Uint64N(0x7ff0000000000000-1) + 1)
	}
	return math.Abs(logU(r, -1074, 1024))
}

// genTrig draws |x| log-uniform below 1.5·2^20 (the documented range)
// or within a few ulp of a multiple of π/2 there.
func genTrig(r *rand.Rand) float64 {
	if r.IntN(2) == 0 {
		return logU(r, -35, 20.58)
	}
	k := float64(r.IntN(1<<20) + 1)
	if r.IntN(4) == 0 {
		k = float64(r.IntN(64) + 1)
	}
	x := k * (math.Pi / 2)
	for range r.IntN(4) {
		x = math.Nextafter(x, inf(2*r.IntN(2)-1))
	}
	if r.IntN(2) == 0 {
		x = -x
	}
	return x
}

func trigEdges() []float64 {
	e := []float64{0x1p-1074, 0x1p-28, 0x1p-27, 0x1.0000000000001p-27, 0.5, 1, math.Pi / 4, math.Pi / 2, math.Pi, 3 * math.Pi / 2, 2 * math.Pi,
		100 * math.Pi, 0x1.8p20 - 1}
	// Neighbours of k·π/2 for small k, where reduction cancels most.
	for k := 1.0; k <= 16; k++ {
		x := k * math.Pi / 2
		e = append(e, x, math.Nextafter(x, 0), math.Nextafter(x, 100))
	}
	return e
}

func samples(t *testing.T) int {
	if testing.Short() {
		return 3000
	}
	return 40000
}

func TestAccuracy64(t *testing.T) {
	for _, c := range cases64 {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(1, uint64(len(c.name))))
			var worst float64
			var worstX float64
			check := func(x float64) {
				got := c.f(x)
				ref := c.ref(x)
				want, _ := ref.Float64() // correctly rounded, ±Inf on overflow
				if math.IsInf(want, 0) || math.IsInf(got, 0) {
					if got != want {
						t.Errorf("%s(%v) = %v, want %v", c.name, x, got, want)
					}
					return
				}
				if e := ulpErr(got, ref); e > worst {
					worst, worstX = e, x
				}
			}
			for _, x := range c.edges {
				check(x)
				if !c.pos {
					check(-x)
				}
			}
			for range samples(t) {
				check(c.gen(r))
			}
			t.Logf("%s: max error %.3f ulp at x = %v (bound %v)", c.name, worst, worstX, c.bound)
			if worst > c.bound {
				t.Errorf("%s: max error %.3f ulp at x = %v (%x), bound %v ulp", c.name, worst, worstX, math.Float64bits(worstX), c.bound)
			}
		})
	}
}

// TestTrigLarge checks the documented absolute error of Sin64 and Cos64
// beyond the exact-reduction range, for 1.5·2^20 ≤ |x| < 2^52.
func TestTrigLarge(t *testing.T) {
	const bound = 0x1p-50
	r := rand.New(rand.NewPCG(3, 3))
	var worst, worstX float64
	for range samples(t) / 4 {
		x := logU(r, 20.6, 52)
		for _, cos := range []bool{false, true} {
			f := devmath.Sin64
			if cos {
				f = devmath.Cos64
			}
			ref, _ := refSinCos(x, cos).Float64()
			if e := math.Abs(f(x) - ref); e > worst {
				worst, worstX = e, x
			}
		}
	}
	t.Logf("max absolute error 2^%.1f at x = %v (bound 2^-50)", math.Log2(worst), worstX)
	if worst > bound {
		t.Errorf("Sin64/Cos64: absolute error %g at x = %v, bound 2^-50", worst, worstX)
	}
}
