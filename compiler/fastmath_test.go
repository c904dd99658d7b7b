package compiler

// //kern:kernel fastmath on the emulator: results against float64 within
// the error of the approximate instructions, and the PTX without the
// roundings that forbid contraction, while the default keeps them.

import (
	"math"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

func TestFastMath(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel fastmath
func K(t gpu.Thread, in, out []uint64) {
	x := gpu.Float32FromBits(uint32(in[0]))
	y := gpu.Float32FromBits(uint32(in[1]))
	out[0] = uint64(gpu.Float32Bits(x*y + 1))
	out[1] = uint64(gpu.Float32Bits(gpu.Exp(x)))
	out[2] = uint64(gpu.Float32Bits(gpu.Sin(y)))
	out[3] = uint64(gpu.Float32Bits(gpu.Cos(y)))
	out[4] = uint64(gpu.Float32Bits(gpu.Tanh(y)))
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.PTX, ".rn.f32") || !strings.Contains(p.PTX, "ex2.approx.ftz.f32") || !strings.Contains(p.PTX, "tanh.approx.f32") {
		t.Errorf("fastmath PTX keeps .rn or lacks the approximate instructions:\n%s", p.PTX)
	}
	exact, err := CompileSource(Config{}, "k.go", []byte(strings.Replace(src, " fastmath", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(exact.PTX, "mul.rn.f32") || strings.Contains(exact.PTX, "tanh.approx") {
		t.Errorf("the default lost its roundings or uses tanh.approx")
	}
	dev := emu.NewDevice(emu.Options{})
	for _, c := range [][2]float32{{0.5, 0.25}, {-3, 1.5}, {10, -2.75}, {-20, 3}, {1e-3, -0.1}} {
		x, y := c[0], c[1]
		got, err := runK(dev, p.PTX, []uint64{uint64(math.Float32bits(x)), uint64(math.Float32bits(y))}, 5)
		if err != nil {
			t.Fatal(err)
		}
		f := func(i int) float64 { return float64(math.Float32frombits(uint32(got[i]))) }
		X, Y := float64(x), float64(y)
		for _, chk := range []struct {
			name      string
			got, want float64
			tol       float64 // relative, or absolute near zero
		}{
			{"x*y+1", f(0), X*Y + 1, 0x1p-23},
			{"Exp", f(1), math.Exp(X), 0x1p-22 * (1 + math.Abs(X*math.Log2E))},
			{"Sin", f(2), math.Sin(Y), 0x1p-20},
			{"Cos", f(3), math.Cos(Y), 0x1p-20},
			{"Tanh", f(4), math.Tanh(Y), 0x1p-10},
		} {
			if d := math.Abs(chk.got - chk.want); d > chk.tol*math.Max(1, math.Abs(chk.want)) {
				t.Errorf("%s at x=%g y=%g: %g, want %g (|err| %.3g > %.3g)", chk.name, x, y, chk.got, chk.want, d, chk.tol)
			}
		}
	}
}
