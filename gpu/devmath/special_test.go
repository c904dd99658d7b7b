package devmath_test

// Special values: NaN, ±Inf, ±0 (with sign), and the saturation of each
// routine, exactly.

import (
	"math"
	"testing"

	"github.com/gokern/kern/gpu/devmath"
)

func same64(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Float64bits(got) == math.Float64bits(want)
}

func TestSpecial64(t *testing.T) {
	nan, pinf, ninf, nz := math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)
	fns := map[string]func(float64) float64{
		"Exp64": devmath.Exp64, "Exp264": devmath.Exp264, "Log64": devmath.Log64, "Log264": devmath.Log264,
		"Sin64": devmath.Sin64, "Cos64": devmath.Cos64, "Tanh64": devmath.Tanh64, "Erf64": devmath.Erf64,
	}
	cases := []struct {
		fn      string
		x, want float64
	}{
		{"Exp64", nan, nan}, {"Exp64", pinf, pinf}, {"Exp64", ninf, 0}, {"Exp64", 0, 1}, {"Exp64", nz, 1},
		{"Exp64", 710, pinf}, {"Exp64", 1e300, pinf}, {"Exp64", -746, 0}, {"Exp64", -1e300, 0}, {"Exp64", 1, math.E},
		{"Exp264", nan, nan}, {"Exp264", pinf, pinf}, {"Exp264", ninf, 0}, {"Exp264", 0, 1}, {"Exp264", nz, 1},
		{"Exp264", 1024, pinf}, {"Exp264", 1023, 0x1p1023}, {"Exp264", -1074, 0x1p-1074}, {"Exp264", -1022, 0x1p-1022},
		{"Exp264", -1075, 0}, {"Exp264", -1076, 0}, {"Exp264", 3, 8}, {"Exp264", -1e300, 0},
		{"Log64", nan, nan}, {"Log64", pinf, pinf}, {"Log64", ninf, nan}, {"Log64", -1, nan}, {"Log64", 0, ninf},
		{"Log64", nz, ninf}, {"Log64", 1, 0}, {"Log64", -0x1p-1074, nan},
		{"Log264", nan, nan}, {"Log264", pinf, pinf}, {"Log264", -1, nan}, {"Log264", 0, ninf}, {"Log264", nz, ninf},
		{"Log264", 1, 0}, {"Log264", 0x1p-1074, -1074}, {"Log264", 0x1p1023, 1023}, {"Log264", 0.25, -2},
		{"Sin64", nan, nan}, {"Sin64", pinf, nan}, {"Sin64", ninf, nan}, {"Sin64", 0, 0}, {"Sin64", nz, nz},
		{"Sin64", 0x1p-1074, 0x1p-1074}, {"Sin64", -0x1p-1074, -0x1p-1074},
		{"Cos64", nan, nan}, {"Cos64", pinf, nan}, {"Cos64", ninf, nan}, {"Cos64", 0, 1}, {"Cos64", nz, 1},
		{"Tanh64", nan, nan}, {"Tanh64", pinf, 1}, {"Tanh64", ninf, -1}, {"Tanh64", 0, 0}, {"Tanh64", nz, nz},
		{"Tanh64", 22, 1}, {"Tanh64", -1e300, -1}, {"Tanh64", 0x1p-1074, 0x1p-1074}, {"Tanh64", -0x1p-1074, -0x1p-1074},
		{"Erf64", nan, nan}, {"Erf64", pinf, 1}, {"Erf64", ninf, -1}, {"Erf64", 0, 0}, {"Erf64", nz, nz},
		{"Erf64", 6, 1}, {"Erf64", -1e300, -1},
	}
	for _, c := range cases {
		if got := fns[c.fn](c.x); !same64(got, c.want) {
			t.Errorf("%s(%v) = %v, want %v", c.fn, c.x, got, c.want)
		}
	}
	// Huge arguments of Sin64 and Cos64 stay in [-1, 1].
	for _, x := range []float64{0x1p30, 1e15, 0x1p53, 1e22, 1e300, math.MaxFloat64, -math.MaxFloat64} {
		for _, f := range []func(float64) float64{devmath.Sin64, devmath.Cos64} {
			if y := f(x); !(y >= -1 && y <= 1) {
				t.Errorf("sin/cos(%v) = %v, want a value in [-1, 1]", x, y)
			}
		}
	}
}

func TestSpecial32(t *testing.T) {
	nan, pinf, ninf := float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	nz := float32(math.Copysign(0, -1))
	for _, f := range []struct {
		name string
		f    func(float32) float32
	}{{"Tanh32", devmath.Tanh32}, {"Erf32", devmath.Erf32}} {
		cases := [][2]float32{{pinf, 1}, {ninf, -1}, {0, 0}, {nz, nz}, {100, 1}, {-100, -1}, {0x1p-149, 0x1p-149}, {-0x1p-149, -0x1p-149}}
		if f.name == "Erf32" {
			cases[6][1], cases[7][1] = 0x1p-149, -0x1p-149 // 2/√π·2^-149 rounds to 2^-149
		}
		for _, c := range cases {
			if got := f.f(c[0]); math.Float32bits(got) != math.Float32bits(c[1]) {
				t.Errorf("%s(%v) = %v, want %v", f.name, c[0], got, c[1])
			}
		}
		if got := f.f(nan); got == got {
			t.Errorf("%s(NaN) = %v, want NaN", f.name, got)
		}
	}
}
