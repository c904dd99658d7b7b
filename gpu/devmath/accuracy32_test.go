package devmath_test

// float32 accuracy: every float32 input with a stride (all of them with
// -exhaustive), against float64 math, whose own error is about 2^-29
// float32 ulp.

import (
	"math"
	"testing"

	"github.com/gokern/kern/gpu/devmath"
)

// ulpErr32 returns |got - ref| in float32 ulps at ref (2^-149 at least).
func ulpErr32(got float32, ref float64) float64 {
	if ref == 0 {
		return math.Abs(float64(got)) / 0x1p-149
	}
	_, e := math.Frexp(ref) // ref = m·2^e, |m| in [1/2, 1)
	return math.Abs(float64(got)-ref) / math.Ldexp(1, max(e-24, -149))
}

func TestAccuracy32(t *testing.T) {
	step := uint64(251)
	if testing.Short() {
		step = 4093
	}
	if *exhaustive {
		step = 1
	}
	for _, c := range []struct {
		name  string
		f     func(float32) float32
		ref   func(float64) float64
		bound float64
	}{
		{"Tanh32", devmath.Tanh32, math.Tanh, 2},
		{"Erf32", devmath.Erf32, math.Erf, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var worst float64
			var worstX float32
			for b := uint64(0); b < 1<<32; b += step {
				x := math.Float32frombits(uint32(b))
				if x != x {
					continue
				}
				if e := ulpErr32(c.f(x), c.ref(float64(x))); e > worst {
					worst, worstX = e, x
				}
			}
			t.Logf("%s: max error %.3f ulp at x = %v (bound %v, stride %d)", c.name, worst, worstX, c.bound, step)
			if worst > c.bound {
				t.Errorf("%s: max error %.3f ulp at x = %v (%#x), bound %v ulp", c.name, worst, worstX, math.Float32bits(worstX), c.bound)
			}
		})
	}
}
