package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// tileShapes are rowShapes that fit the largest tile (cols ≤ 4096), plus
// rows that fill the K = 4 and K = 16 tiles exactly and one just past K = 4.
var tileShapes = []struct{ rows, cols int }{
	{1, 1}, {1, 7}, {3, 33}, {4, 256}, {2, 1000}, {37, 128}, {130, 5}, {3, 1024}, {2, 1025}, {2, 4096},
}

func TestSoftmaxTile(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testSoftmaxTile[float32](t, dev) },
			func(t *testing.T) { testSoftmaxTile[gpu.Half](t, dev) },
			func(t *testing.T) { testSoftmaxTile[gpu.BFloat16](t, dev) })
	})
}

func testSoftmaxTile[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(19, 20))
	for k, sh := range tileShapes {
		mag := []float64{1, 8, 0.01}[k%3]
		n := sh.rows * sh.cols
		xv := randn(rng, n, mag)
		if sh.cols > 3 { // masked positions, as TestSoftmax
			for j := 0; j < n; j += 3 {
				xv[j] = math.Inf(-1)
			}
		}
		x, xs := upload[T](t, dev, xv)
		want, scale := refSoftmax(xs, sh.rows, sh.cols)
		tl := outTol[T](8 + float64(sh.cols)/256)
		tl.srel = 2 * 0x1p-24
		out := alloc[T](t, dev, n)
		if err := softmaxTiled(dev, out, x, sh.rows, sh.cols); err != nil {
			t.Fatal(err)
		}
		compare(t, fmt.Sprintf("v3 %dx%d (|x|~%g) out", sh.rows, sh.cols, mag), download(t, out), want, tl, scale)
	}
}

func TestRMSNormTile(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testRMSNormTile[float32](t, dev) },
			func(t *testing.T) { testRMSNormTile[gpu.Half](t, dev) },
			func(t *testing.T) { testRMSNormTile[gpu.BFloat16](t, dev) })
	})
}

func testRMSNormTile[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(21, 22))
	const eps = 1e-6
	for k, sh := range tileShapes {
		mag := []float64{1e-2, 1, 30}[k%3]
		x, xs := upload[T](t, dev, randn(rng, sh.rows*sh.cols, mag))
		w, ws := upload[T](t, dev, uniformVals(rng, sh.cols, -2, 2))
		want := refRMSNorm(xs, ws, sh.rows, sh.cols, eps)
		out := alloc[T](t, dev, sh.rows*sh.cols)
		if err := rmsNormTiled(dev, out, x, w, sh.rows, sh.cols, eps); err != nil {
			t.Fatal(err)
		}
		compare(t, fmt.Sprintf("v3 %dx%d (|x|~%g) out", sh.rows, sh.cols, mag), download(t, out), want, normTol[T](sh.cols), nil)
	}
}

// A row longer than the largest tile is an error, not a wrong answer.
func TestTileTooLong(t *testing.T) {
	dev := kern.OpenNative()
	defer dev.Close()
	x := alloc[float32](t, dev, 4097)
	out := alloc[float32](t, dev, 4097)
	wantErr(t, "softmax v3", softmaxTiled(dev, out, x, 1, 4097), "4097", "4096")
	wantErr(t, "rmsnorm v3", rmsNormTiled(dev, out, x, x, 1, 4097, 1e-6), "4097", "4096")
}
