package compiler

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

// 1/x lowers to rcp.rn (recip.go) and gives Go's bits for every class of
// float32 and float64 input: zeros of both signs, infinities, NaN,
// subnormals (whose reciprocal overflows), values whose reciprocal is
// subnormal or rounds at the bottom of the normal range, and random
// values over the whole exponent range. A dividend other than 1 keeps
// div.rn.
func TestReciprocalIsGosOneOverX(t *testing.T) {
	const src = `package k

import (
	"math"

	"github.com/gokern/kern/gpu"
)

//kern:kernel
func K(t gpu.Thread, in, out []uint64) {
	for i := 0; i < len(in)/2; i++ {
		x := math.Float32frombits(uint32(in[2*i]))
		y := math.Float64frombits(in[2*i+1])
		out[4*i] = uint64(math.Float32bits(1 / x))
		out[4*i+1] = math.Float64bits(1 / y)
		out[4*i+2] = uint64(math.Float32bits(2 / x))
		out[4*i+3] = math.Float64bits(1 / math.Sqrt(y))
	}
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rcp.rn.f32", "rcp.rn.f64", "div.rn.f32"} {
		if !strings.Contains(p.PTX, want) {
			t.Errorf("PTX has no %s", want)
		}
	}
	if strings.Contains(p.PTX, "div.rn.f64") {
		t.Errorf("1/math.Sqrt(y) still divides:\n%s", p.PTX)
	}
	f32 := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		1, -1, 3, 0.1, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 0x1p-126, 0x1p-127, 0x1.8p-130,
		0x1p127, -0x1p127, 0x1.8p126, 0x1.fffffep125, 0x1.000002p126, 0x1p-128}
	f64 := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		1, -1, 3, 0.1, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 0x1p-1022, 0x1p-1023, 0x1.8p-1026,
		0x1p1023, -0x1p1023, 0x1.8p1022, 0x1.fffffffffffffp1021, 0x1.0000000000001p1022, 0x1p-1024}
	r := rand.New(rand.NewPCG(3, 9))
	for range 200 {
		f32 = append(f32, math.Float32frombits(r.Uint32()))
		f64 = append(f64, math.Float64frombits(r.Uint64()))
	}
	n := max(len(f32), len(f64))
	inputs := make([]uint64, 2*n)
	for i := range n {
		inputs[2*i] = uint64(math.Float32bits(f32[i%len(f32)]))
		inputs[2*i+1] = math.Float64bits(f64[i%len(f64)])
	}
	got, err := runK(emu.NewDevice(emu.Options{}), p.PTX, inputs, 4*n)
	if err != nil {
		t.Fatal(err)
	}
	same32 := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b }
	same64 := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }
	for i := range n {
		x, y := f32[i%len(f32)], f64[i%len(f64)]
		if g := math.Float32frombits(uint32(got[4*i])); !same32(g, 1/x) {
			t.Errorf("1/%g (f32 %#x) = %g on the emulator, Go gives %g", x, math.Float32bits(x), g, 1/x)
		}
		if g := math.Float64frombits(got[4*i+1]); !same64(g, 1/y) {
			t.Errorf("1/%g (f64 %#x) = %g on the emulator, Go gives %g", y, math.Float64bits(y), g, 1/y)
		}
		if g := math.Float32frombits(uint32(got[4*i+2])); !same32(g, 2/x) {
			t.Errorf("2/%g (f32) = %g on the emulator, Go gives %g", x, g, 2/x)
		}
		if g, w := math.Float64frombits(got[4*i+3]), 1/math.Sqrt(y); !same64(g, w) {
			t.Errorf("1/Sqrt(%g) = %g on the emulator, Go gives %g", y, g, w)
		}
	}
}
