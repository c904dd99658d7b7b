package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// elemSizes are the lengths the element-wise ops are checked at: one
// element, less than a block, not a multiple of the block, and several
// blocks.
var elemSizes = []int{1, 7, 255, 257, 5000}

// withSpecials sets a few elements of xs to values at the edges of the
// functions' ranges.
func withSpecials(xs []float64) []float64 {
	sp := []float64{0, -0.5, 3, -3, 10, -10, 40, -40, 100, -100}
	for j := 0; j < len(xs) && j < len(sp); j++ {
		xs[len(xs)-1-j] = sp[j]
	}
	return xs
}

func TestSiLUMul(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testSiLUMul[float32](t, dev) },
			func(t *testing.T) { testSiLUMul[gpu.Half](t, dev) },
			func(t *testing.T) { testSiLUMul[gpu.BFloat16](t, dev) })
	})
}

func testSiLUMul[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(13, 14))
	for k, n := range elemSizes {
		mag := []float64{1, 5, 20}[k%3]
		gate, gs := upload[T](t, dev, withSpecials(randn(rng, n, mag)))
		up, us := upload[T](t, dev, randn(rng, n, 1))
		out := alloc[T](t, dev, n)
		if err := SiLUMul(dev, out, gate, up, n); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, n)
		for j, g := range gs {
			want[j] = g / (1 + math.Exp(-g)) * us[j]
		}
		// exp (2 ulp), 1+e, the division and the product: 8 ulp.
		compare(t, fmt.Sprintf("n=%d (|gate|~%g) out", n, mag), download(t, out), want, outTol[T](8), nil)
	}
}

func TestGELU(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testGELU[float32](t, dev) },
			func(t *testing.T) { testGELU[gpu.Half](t, dev) },
			func(t *testing.T) { testGELU[gpu.BFloat16](t, dev) })
	})
}

func testGELU[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(15, 16))
	for k, n := range elemSizes {
		mag := []float64{1, 0.01, 8}[k%3]
		x, xs := upload[T](t, dev, withSpecials(randn(rng, n, mag)))
		exact, approx := alloc[T](t, dev, n), alloc[T](t, dev, n)
		if err := GELU(dev, exact, x, n); err != nil {
			t.Fatal(err)
		}
		if err := GELUTanh(dev, approx, x, n); err != nil {
			t.Fatal(err)
		}
		wantExact, wantApprox, scale := make([]float64, n), make([]float64, n), make([]float64, n)
		for j, v := range xs {
			wantExact[j] = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
			wantApprox[j] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
			scale[j] = math.Abs(v)
		}
		// erf and tanh: 4 ulp of the result, or 2^-22 absolute, which
		// 1 + erf turns into 2^-22·|x|/2 for negative x; the cubic's
		// roundings add about 2^-24·|x|.
		tl := outTol[T](8)
		tl.srel = 0x1p-21
		name := fmt.Sprintf("n=%d (|x|~%g)", n, mag)
		compare(t, name+" GELU", download(t, exact), wantExact, tl, scale)
		compare(t, name+" GELUTanh", download(t, approx), wantApprox, tl, scale)
	}
}

func TestActivationShapeErrors(t *testing.T) {
	dev := kern.OpenNative()
	a, b, short := alloc[float32](t, dev, 8), alloc[float32](t, dev, 8), alloc[float32](t, dev, 7)
	wantErr(t, "up", SiLUMul(dev, a, b, short, 8), "ops.SiLUMul", "up has 7 elements, want n = 8")
	wantErr(t, "gate", SiLUMul(dev, a, nil, b, 8), "ops.SiLUMul", "gate is nil")
	wantErr(t, "n", GELU(dev, a, b, -1), "ops.GELU", "n = -1")
	wantErr(t, "out", GELUTanh(dev, short, b, 8), "ops.GELUTanh", "out has 7")
	wantErr(t, "alias", GELU(dev, a, a, 8), "ops.GELU", "overlaps")
	if err := GELU(dev, alloc[float32](t, dev, 0), alloc[float32](t, dev, 0), 0); err != nil {
		t.Errorf("n = 0: %v", err)
	}
}
