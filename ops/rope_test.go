package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// refRoPE is the rotation with float64 angles; scale is |x[i]| +
// |x[i+half]|, the magnitude an error in cos/sin is relative to.
func refRoPE(x []float64, tokens, heads, headDim, posOffset int, theta float64) (out, scale []float64) {
	out, scale = make([]float64, len(x)), make([]float64, len(x))
	half := headDim / 2
	for tok := range tokens {
		for h := range heads {
			base := (tok*heads + h) * headDim
			for i := range half {
				a := float64(posOffset+tok) * math.Pow(theta, -2*float64(i)/float64(headDim))
				s, c := math.Sincos(a)
				x1, x2 := x[base+i], x[base+i+half]
				out[base+i] = x1*c - x2*s
				out[base+i+half] = x2*c + x1*s
				scale[base+i] = math.Abs(x1) + math.Abs(x2)
				scale[base+i+half] = scale[base+i]
			}
		}
	}
	return out, scale
}

// ropeTol: gpu.Sin/Cos within 2^-20 plus the float32 rounding of the
// reduced angle, times |x1|+|x2|, and the products' roundings.
func ropeTol[T Float]() tol {
	tl := outTol[T](0)
	tl.srel = 0x1p-19
	return tl
}

func TestRoPE(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testRoPE[float32](t, dev) },
			func(t *testing.T) { testRoPE[gpu.Half](t, dev) },
			func(t *testing.T) { testRoPE[gpu.BFloat16](t, dev) })
	})
}

func testRoPE[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		tokens, heads, headDim, pos int
		theta                       float64
	}{
		{1, 1, 2, 0, 10000},
		{7, 3, 64, 5, 10000},        // Llama 2
		{5, 4, 128, 32760, 1e6},     // Qwen3 at the end of a 32k context
		{2, 2, 256, 100000, 500000}, // a long context
		{33, 1, 18, 1 << 23, 10000}, // an odd number of pairs, positions near 2^23
		{1, 8, 128, 32767, 1e6},     // decode step
	} {
		n := c.tokens * c.heads * c.headDim
		x, xs := upload[T](t, dev, randn(rng, n, 2))
		out := alloc[T](t, dev, n)
		if err := RoPE(dev, out, x, c.tokens, c.heads, c.headDim, c.pos, c.theta); err != nil {
			t.Fatal(err)
		}
		want, scale := refRoPE(xs, c.tokens, c.heads, c.headDim, c.pos, c.theta)
		compare(t, fmt.Sprintf("%+v out", c), download(t, out), want, ropeTol[T](), scale)
	}
}

// TestRoPEFloat32AngleIsNotEnough documents why RoPE forms its angle in
// float64: the float32 formula (as in Hugging Face's rotary embedding)
// misses RoPE's tolerance by orders of magnitude at 32k positions.
func TestRoPEFloat32AngleIsNotEnough(t *testing.T) {
	const headDim, theta, pos = 128, 1e6, 32767
	worst := 0.0
	for i := range headDim / 2 {
		inv := float32(1 / math.Pow(theta, float64(2*i)/headDim))
		a32 := float32(pos) * inv
		exact := float64(pos) * math.Pow(theta, -2*float64(i)/headDim)
		worst = max(worst, math.Abs(math.Cos(float64(a32))-math.Cos(exact)))
	}
	if allowed := ropeTol[float32]().srel; worst < 100*allowed {
		t.Errorf("float32 angles: worst cos error %.3g, expected far above RoPE's %.3g", worst, allowed)
	} else {
		t.Logf("float32 angles at position %d: worst cos error %.3g (RoPE allows %.3g)", pos, worst, allowed)
	}
}

func TestRoPEShapeErrors(t *testing.T) {
	dev := kern.OpenNative()
	x, out := alloc[float32](t, dev, 24), alloc[float32](t, dev, 24)
	wantErr(t, "odd", RoPE(dev, out, x, 2, 4, 3, 0, 1e4), "ops.RoPE", "headDim = 3", "even")
	wantErr(t, "len", RoPE(dev, out, x, 2, 2, 4, 0, 1e4), "ops.RoPE", "x has 24 elements", "tokens×heads×headDim = 16")
	wantErr(t, "theta", RoPE(dev, out, x, 2, 3, 4, 0, 0), "ops.RoPE", "theta = 0")
	wantErr(t, "pos", RoPE(dev, out, x, 2, 3, 4, -1, 1e4), "ops.RoPE", "posOffset = -1")
	wantErr(t, "far", RoPE(dev, out, x, 2, 3, 4, 1<<24, 1e4), "ops.RoPE", "2^24")
	wantErr(t, "nil", RoPE(dev, nil, x, 2, 3, 4, 0, 1e4), "ops.RoPE", "out is nil")
	// 2^33 elements: refused before the buffers are looked at (the kernel
	// indexes in 32 bits).
	wantErr(t, "2^32", RoPE(dev, out, x, 1<<22, 32, 64, 0, 1e4), "ops.RoPE", "fewer than 2^32 elements")
}
