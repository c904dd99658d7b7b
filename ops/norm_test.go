package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// rowShapes are the [rows, cols] every row op is checked at: one element,
// one row, odd lengths, a row shorter and one longer than a warp, rows not
// a multiple of the block, a long row (10000 > 256 threads · 39), and many
// short rows (more than the warp-per-row version's eight per block), and
// both sides of the register-resident rows' limit.
var rowShapes = []struct{ rows, cols int }{
	{1, 1}, {1, 7}, {3, 33}, {4, 256}, {2, 1000}, {1, 10000}, {37, 128}, {130, 5},
	{2, 4096}, {1, 4097}, // the last row that fits in registers (rowRegs), the first that does not
}

// ---------------------------------------------------------------------------
// float64 references

func refRMSNorm(x, w []float64, rows, cols int, eps float64) []float64 {
	out := make([]float64, len(x))
	for r := range rows {
		row := x[r*cols : (r+1)*cols]
		ss := 0.0
		for _, v := range row {
			ss += v * v
		}
		inv := 1 / math.Sqrt(ss/float64(cols)+eps)
		for j, v := range row {
			out[r*cols+j] = v * inv * w[j]
		}
	}
	return out
}

// refLayerNorm also returns the scale of each output's error: the
// float32 mean's error is relative to the row's magnitude, not to the
// (possibly tiny) deviation x - mean.
func refLayerNorm(x, w, bias []float64, rows, cols int, eps float64) (out, scale []float64) {
	out, scale = make([]float64, len(x)), make([]float64, len(x))
	for r := range rows {
		row := x[r*cols : (r+1)*cols]
		mean, absMax := 0.0, 0.0
		for _, v := range row {
			mean += v
			absMax = max(absMax, math.Abs(v))
		}
		mean /= float64(cols)
		vr := 0.0
		for _, v := range row {
			vr += (v - mean) * (v - mean)
		}
		inv := 1 / math.Sqrt(vr/float64(cols)+eps)
		for j, v := range row {
			out[r*cols+j] = (v-mean)*inv*w[j] + bias[j]
			scale[r*cols+j] = (math.Abs(v-mean)+absMax)*inv*math.Abs(w[j]) + math.Abs(bias[j])
		}
	}
	return out, scale
}

// normTol is the tolerance of a normalized output: the float32 sum of
// squares over a row (each thread adds about cols/256 terms in order,
// then a 13-level tree), rsqrt.approx (2 ulp), two products, then one
// rounding to T.
func normTol[T Float](cols int) tol {
	return outTol[T](8 + float64(cols)/256)
}

// ---------------------------------------------------------------------------
// tests

func TestRMSNorm(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testRMSNorm[float32](t, dev) },
			func(t *testing.T) { testRMSNorm[gpu.Half](t, dev) },
			func(t *testing.T) { testRMSNorm[gpu.BFloat16](t, dev) })
	})
}

func testRMSNorm[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(1, 2))
	const eps = 1e-6
	for k, sh := range rowShapes {
		mag := []float64{1e-2, 1, 30}[k%3]
		x, xs := upload[T](t, dev, randn(rng, sh.rows*sh.cols, mag))
		w, ws := upload[T](t, dev, uniformVals(rng, sh.cols, -2, 2))
		want := refRMSNorm(xs, ws, sh.rows, sh.cols, eps)
		for _, v := range []int{rmsV1Block, rmsV2Warp} {
			out := alloc[T](t, dev, sh.rows*sh.cols)
			if err := rmsNorm(newShape("RMSNorm"), v, dev, out, x, w, sh.rows, sh.cols, eps); err != nil {
				t.Fatal(err)
			}
			compare(t, fmt.Sprintf("v%d %dx%d (|x|~%g) out", v, sh.rows, sh.cols, mag), download(t, out), want, normTol[T](sh.cols), nil)
		}
	}
}

func TestHeadRMSNorm(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testHeadRMSNorm[float32](t, dev) },
			func(t *testing.T) { testHeadRMSNorm[gpu.Half](t, dev) },
			func(t *testing.T) { testHeadRMSNorm[gpu.BFloat16](t, dev) })
	})
}

func testHeadRMSNorm[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range []struct{ tokens, heads, headDim int }{{1, 1, 64}, {5, 8, 128}, {3, 2, 256}, {2, 3, 1000}} {
		n := sh.tokens * sh.heads * sh.headDim
		x, xs := upload[T](t, dev, randn(rng, n, 3))
		w, ws := upload[T](t, dev, uniformVals(rng, sh.headDim, 0, 2))
		out := alloc[T](t, dev, n)
		if err := HeadRMSNorm(dev, out, x, w, sh.tokens, sh.heads, sh.headDim, 1e-6); err != nil {
			t.Fatal(err)
		}
		want := refRMSNorm(xs, ws, sh.tokens*sh.heads, sh.headDim, 1e-6)
		compare(t, fmt.Sprintf("%v out", sh), download(t, out), want, normTol[T](sh.headDim), nil)
	}
}

func TestAddRMSNorm(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testAddRMSNorm[float32](t, dev) },
			func(t *testing.T) { testAddRMSNorm[gpu.Half](t, dev) },
			func(t *testing.T) { testAddRMSNorm[gpu.BFloat16](t, dev) })
	})
}

func testAddRMSNorm[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(5, 6))
	const eps = 1e-5
	for k, sh := range rowShapes {
		mag := []float64{1, 30, 1e-2}[k%3]
		n := sh.rows * sh.cols
		x, xs := upload[T](t, dev, randn(rng, n, mag))
		res, rs := upload[T](t, dev, randn(rng, n, mag))
		w, ws := upload[T](t, dev, uniformVals(rng, sh.cols, -2, 2))
		out, resOut := alloc[T](t, dev, n), alloc[T](t, dev, n)
		if err := AddRMSNorm(dev, out, resOut, x, res, w, sh.rows, sh.cols, eps); err != nil {
			t.Fatal(err)
		}
		// The device adds in float32, then rounds to T: the same two
		// roundings here make residualOut exact.
		h := make([]float64, n)
		for j := range h {
			h[j] = float64(float32(xs[j] + rs[j]))
		}
		h = wide(round[T](h))
		name := fmt.Sprintf("%dx%d (|x|~%g)", sh.rows, sh.cols, mag)
		compare(t, name+" residualOut", download(t, resOut), h, tol{}, nil)
		compare(t, name+" out", download(t, out), refRMSNorm(h, ws, sh.rows, sh.cols, eps), normTol[T](sh.cols), nil)
	}
}

func TestLayerNorm(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testLayerNorm[float32](t, dev) },
			func(t *testing.T) { testLayerNorm[gpu.Half](t, dev) },
			func(t *testing.T) { testLayerNorm[gpu.BFloat16](t, dev) })
	})
}

func testLayerNorm[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(7, 8))
	const eps = 1e-5
	for k, sh := range rowShapes {
		mag := []float64{1, 1e-2, 30}[k%3]
		n := sh.rows * sh.cols
		xv := randn(rng, n, mag)
		for j := range xv { // a mean far from zero: the case E[x²]-mean² gets wrong
			xv[j] += 4 * mag
		}
		x, xs := upload[T](t, dev, xv)
		w, ws := upload[T](t, dev, uniformVals(rng, sh.cols, -2, 2))
		bias, bs := upload[T](t, dev, uniformVals(rng, sh.cols, -1, 1))
		out := alloc[T](t, dev, n)
		if err := LayerNorm(dev, out, x, w, bias, sh.rows, sh.cols, eps); err != nil {
			t.Fatal(err)
		}
		want, scale := refLayerNorm(xs, ws, bs, sh.rows, sh.cols, eps)
		tl := normTol[T](sh.cols)
		tl.srel, tl.rel = tl.rel, unit[T]()
		compare(t, fmt.Sprintf("%dx%d (|x|~%g) out", sh.rows, sh.cols, mag), download(t, out), want, tl, scale)
	}
}

// TestNormShapeErrors checks that every norm rejects bad arguments with an
// error naming the op and the argument, before launching.
func TestNormShapeErrors(t *testing.T) {
	dev := kern.OpenNative()
	x, w, out := alloc[float32](t, dev, 12), alloc[float32](t, dev, 4), alloc[float32](t, dev, 12)
	short := alloc[float32](t, dev, 11)
	for _, c := range []struct {
		name string
		err  error
		subs []string
	}{
		{"short x", RMSNorm(dev, out, short, w, 3, 4, 1e-6), []string{"ops.RMSNorm", "x has 11 elements", "rows×cols = 12"}},
		{"short out", RMSNorm(dev, short, x, w, 3, 4, 1e-6), []string{"ops.RMSNorm", "out has 11"}},
		{"weight", RMSNorm(dev, out, x, x, 3, 4, 1e-6), []string{"weight has 12 elements", "cols = 4"}},
		{"nil weight", RMSNorm(dev, out, x, nil, 3, 4, 1e-6), []string{"weight is nil"}},
		{"cols 0", RMSNorm(dev, out, x, w, 3, 0, 1e-6), []string{"cols = 0"}},
		{"rows -1", RMSNorm(dev, out, x, w, -1, 4, 1e-6), []string{"rows = -1"}},
		{"eps NaN", RMSNorm(dev, out, x, w, 3, 4, float32(math.NaN())), []string{"eps"}},
		{"eps <0", LayerNorm(dev, out, x, w, w, 3, 4, -1), []string{"ops.LayerNorm", "eps = -1"}},
		{"aliased", RMSNorm(dev, x, x, w, 3, 4, 1e-6), []string{"ops.RMSNorm", "overlaps"}},
		{"nil queue", RMSNorm(nil, out, x, w, 3, 4, 1e-6), []string{"ops.RMSNorm", "nil queue"}},
		{"head", HeadRMSNorm(dev, out, x, w, 2, 2, 4, 1e-6), []string{"ops.HeadRMSNorm", "x has 12 elements", "= 16"}},
		{"heads 0", HeadRMSNorm(dev, out, x, w, 3, 0, 4, 1e-6), []string{"heads = 0"}},
		{"residual", AddRMSNorm(dev, out, out, x, short, w, 3, 4, 1e-6), []string{"ops.AddRMSNorm", "residual has 11"}},
		{"bias", LayerNorm(dev, out, x, w, nil, 3, 4, 1e-6), []string{"ops.LayerNorm", "bias is nil"}},
	} {
		wantErr(t, c.name, c.err, c.subs...)
	}
	if err := RMSNorm(dev, alloc[float32](t, dev, 0), alloc[float32](t, dev, 0), w, 0, 4, 1e-6); err != nil {
		t.Errorf("0 rows: %v, want nil (nothing to do)", err)
	}
}
