package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

func TestArith(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testArith[float32](t, dev) },
			func(t *testing.T) { testArith[gpu.Half](t, dev) },
			func(t *testing.T) { testArith[gpu.BFloat16](t, dev) })
	})
}

// testArith checks Add, Mul and Scale: one float32 rounding, then one
// rounding to T.
func testArith[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(17, 18))
	const s = -1.75
	for k, n := range elemSizes {
		mag := []float64{1, 100, 0.01}[k%3]
		a, as := upload[T](t, dev, randn(rng, n, mag))
		bb, bs := upload[T](t, dev, randn(rng, n, mag))
		sum, prod, scaled := alloc[T](t, dev, n), alloc[T](t, dev, n), alloc[T](t, dev, n)
		if err := Add(dev, sum, a, bb, n); err != nil {
			t.Fatal(err)
		}
		if err := Mul(dev, prod, a, bb, n); err != nil {
			t.Fatal(err)
		}
		if err := Scale(dev, scaled, a, s, n); err != nil {
			t.Fatal(err)
		}
		ws, wp, wsc := make([]float64, n), make([]float64, n), make([]float64, n)
		for j := range n {
			ws[j], wp[j], wsc[j] = as[j]+bs[j], as[j]*bs[j], s*as[j]
		}
		// Rounding the exact result to T gives ±Inf where float16 overflows.
		ws, wp, wsc = wide(round[T](ws)), wide(round[T](wp)), wide(round[T](wsc))
		name := fmt.Sprintf("n=%d (|x|~%g)", n, mag)
		compare(t, name+" Add", download(t, sum), ws, outTol[T](1), nil)
		compare(t, name+" Mul", download(t, prod), wp, outTol[T](1), nil)
		compare(t, name+" Scale", download(t, scaled), wsc, outTol[T](1), nil)
	}
}

// castInputs mixes normal values of several magnitudes with the values
// where conversions go wrong: signed zeros, infinities, NaN, float16's
// largest finite value and the first value that overflows it, ties, and
// subnormals of float16 and of float32.
func castInputs(rng *rand.Rand) []float64 {
	xs := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		65504, 65519.99, 65520, -65520, 1e-5, 6e-8, 3e-8, 1e-40, -1e-40, 3.4e38,
		1 + 0x1p-11, 1 + 3*0x1p-11, 1 + 0x1p-8, 1 + 3*0x1p-8, 0.1, -0.3}
	return append(xs, randn(rng, 600, 50)...)
}

func TestCast(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		t.Run("f32-f16", func(t *testing.T) { testCast[float32, gpu.Half](t, dev) })
		t.Run("f32-bf16", func(t *testing.T) { testCast[float32, gpu.BFloat16](t, dev) })
		t.Run("f16-f32", func(t *testing.T) { testCast[gpu.Half, float32](t, dev) })
		t.Run("f16-bf16", func(t *testing.T) { testCast[gpu.Half, gpu.BFloat16](t, dev) })
		t.Run("bf16-f32", func(t *testing.T) { testCast[gpu.BFloat16, float32](t, dev) })
		t.Run("bf16-f16", func(t *testing.T) { testCast[gpu.BFloat16, gpu.Half](t, dev) })
	})
}

// testCast requires the exact result: the input is converted exactly to
// float32 and rounded once to To, which the host computes with gpu's
// conversions (themselves tested against math/big).
func testCast[From, To Float](t *testing.T, dev *kern.Device) {
	x, xs := upload[From](t, dev, castInputs(rand.New(rand.NewPCG(19, 20))))
	n := x.Len()
	out := alloc[To](t, dev, n)
	if err := Cast(dev, out, x, n); err != nil {
		t.Fatal(err)
	}
	compare(t, "out", download(t, out), wide(round[To](xs)), tol{}, nil)
}

func TestElementwiseShapeErrors(t *testing.T) {
	dev := kern.OpenNative()
	a, short := alloc[gpu.BFloat16](t, dev, 8), alloc[gpu.BFloat16](t, dev, 7)
	wantErr(t, "add", Add(dev, a, a, short, 8), "ops.Add", "b has 7 elements")
	wantErr(t, "mul", Mul(dev, short, a, a, 8), "ops.Mul", "out has 7 elements")
	wantErr(t, "scale", Scale(dev, a, nil, 2, 8), "ops.Scale", "x is nil")
	wantErr(t, "same", Cast(dev, a, short, 7), "ops.Cast", "bfloat16 to bfloat16")
	wantErr(t, "cast", Cast(dev, alloc[float32](t, dev, 8), short, 8), "ops.Cast", "x has 7 elements")
}
