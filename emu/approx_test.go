package emu

import (
	"math"
	"math/rand"
	"testing"
)

func TestExp2f32(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	differ := 0
	for i := 0; i < 1000000; i++ {
		x := float32(r.Float64()*300 - 160)
		got, want := exp2f32(x), float32(math.Exp2(float64(x)))
		if got == want {
			continue
		}
		// Allowed: one ulp, and only where the exact value is close to a
		// rounding boundary; ex2.approx itself may be 2 ulp off.
		ulp := math.Abs(float64(math.Nextafter32(want, float32(math.Inf(1)))) - float64(want))
		if math.Abs(float64(got)-float64(want)) > ulp {
			t.Fatalf("exp2f32(%g) = %g, want %g", x, got, want)
		}
		differ++
	}
	if differ > 10 {
		t.Errorf("exp2f32 differs from the correctly rounded result in %d of 1e6 cases", differ)
	}
	for _, c := range []struct{ x, want float32 }{
		{0, 1}, {3, 8}, {-1, 0.5}, {127, 0x1p127}, {128, float32(math.Inf(1))}, {-149, 0x1p-149}, {-200, 0},
		{float32(math.Inf(-1)), 0},
	} {
		if got := exp2f32(c.x); got != c.want {
			t.Errorf("exp2f32(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	if got := exp2f32(float32(math.NaN())); got == got {
		t.Errorf("exp2f32(NaN) = %g", got)
	}
}
