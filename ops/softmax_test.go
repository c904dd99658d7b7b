package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// refSoftmax also returns each output's error scale: |ref|·(|x - max| +
// range of the row), since float32's rounding of x - max (relative
// 2^-24) becomes a relative error of exp(x - max), and the partial sums
// carry the same for their own offsets from the maximum.
func refSoftmax(x []float64, rows, cols int) (out, scale []float64) {
	out, scale = make([]float64, len(x)), make([]float64, len(x))
	for r := range rows {
		row := x[r*cols : (r+1)*cols]
		m, lo := math.Inf(-1), math.Inf(1)
		for _, v := range row {
			m = max(m, v)
			if !math.IsInf(v, -1) {
				lo = min(lo, v)
			}
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(v - m)
		}
		for j, v := range row {
			o := math.Exp(v-m) / s
			out[r*cols+j] = o
			if o > 0 {
				scale[r*cols+j] = o * (math.Abs(v-m) + (m - lo))
			}
		}
	}
	return out, scale
}

func TestSoftmax(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testSoftmax[float32](t, dev) },
			func(t *testing.T) { testSoftmax[gpu.Half](t, dev) },
			func(t *testing.T) { testSoftmax[gpu.BFloat16](t, dev) })
	})
}

func testSoftmax[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(9, 10))
	for k, sh := range rowShapes {
		mag := []float64{1, 8, 0.01}[k%3]
		n := sh.rows * sh.cols
		xv := randn(rng, n, mag)
		if sh.cols > 3 { // masked positions, and a fully masked last row
			for j := 0; j < n; j += 3 {
				xv[j] = math.Inf(-1)
			}
			if sh.rows > 1 {
				for j := n - sh.cols; j < n; j++ {
					xv[j] = math.Inf(-1)
				}
			}
		}
		x, xs := upload[T](t, dev, xv)
		want, scale := refSoftmax(xs, sh.rows, sh.cols)
		tl := outTol[T](8 + float64(sh.cols)/256)
		tl.srel = 2 * 0x1p-24
		for v, k := range []kset{softmax3K, softmaxK} {
			out := alloc[T](t, dev, n)
			if err := softmax(k, "softmax", dev, out, x, sh.rows, sh.cols); err != nil {
				t.Fatal(err)
			}
			compare(t, fmt.Sprintf("v%d %dx%d (|x|~%g) out", v+1, sh.rows, sh.cols, mag), download(t, out), want, tl, scale)
		}
	}
}

func TestSoftmaxLargeLogits(t *testing.T) {
	// exp(1e4) overflows float32: only the subtraction of the maximum
	// keeps these rows finite.
	xs := []float32{1e4, 1e4 - 1, 1e4 - 2, -1e4}
	want, _ := refSoftmax([]float64{1e4, 1e4 - 1, 1e4 - 2, -1e4}, 1, 4)
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		x, err := kern.Upload(dev, xs)
		if err != nil {
			t.Fatal(err)
		}
		out := alloc[float32](t, dev, 4)
		if err := Softmax(dev, out, x, 1, 4); err != nil {
			t.Fatal(err)
		}
		compare(t, "out", download(t, out), want, tol{abs: 1e-30, rel: 16 * 0x1p-24}, nil)
	})
}

func TestSoftmaxShapeErrors(t *testing.T) {
	dev := kern.OpenNative()
	x, out := alloc[gpu.Half](t, dev, 12), alloc[gpu.Half](t, dev, 10)
	wantErr(t, "out", Softmax(dev, out, x, 3, 4), "ops.Softmax", "out has 10 elements", "rows×cols = 12")
	wantErr(t, "x", Softmax(dev, x, out, 2, 6), "ops.Softmax", "x has 10 elements")
	wantErr(t, "cols", Softmax(dev, x, x, 12, 0), "ops.Softmax", "cols = 0")
	wantErr(t, "nil", Softmax(dev, nil, x, 3, 4), "ops.Softmax", "out is nil")
}
