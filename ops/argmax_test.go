package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// refArgmax is the first index of the largest value (NaN largest).
func refArgmax(x []float64, rows, cols int) []int32 {
	out := make([]int32, rows)
	for r := range rows {
		best := 0
		for j := 1; j < cols; j++ {
			v, w := x[r*cols+j], x[r*cols+best]
			if !math.IsNaN(w) && (math.IsNaN(v) || v > w) {
				best = j
			}
		}
		out[r] = int32(best)
	}
	return out
}

func TestArgmax(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testArgmax[float32](t, dev) },
			func(t *testing.T) { testArgmax[gpu.Half](t, dev) },
			func(t *testing.T) { testArgmax[gpu.BFloat16](t, dev) })
	})
}

func testArgmax[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(23, 24))
	shapes := append(rowShapes[:len(rowShapes):len(rowShapes)], struct{ rows, cols int }{2, 3*argChunk + 5}, struct{ rows, cols int }{1, 20000})
	for k, sh := range shapes {
		xv := randn(rng, sh.rows*sh.cols, 3)
		for r := range sh.rows {
			row := xv[r*sh.cols : (r+1)*sh.cols]
			switch (r + k) % 5 {
			case 0: // a tie for the maximum: the lower index must win
				m := slicesMax(row)
				row[len(row)-1] = m + 1
				row[len(row)/2] = m + 1
			case 1: // the maximum in the last chunk
				row[len(row)-1] = 100
			case 2: // everything equal
				for j := range row {
					row[j] = -2
				}
			case 3: // NaN beats the maximum
				row[len(row)/3] = 1000
				row[len(row)*2/3] = math.NaN()
			}
		}
		x, xs := upload[T](t, dev, xv)
		want := refArgmax(xs, sh.rows, sh.cols)
		for v := 1; v <= 2; v++ {
			out := alloc[int32](t, dev, sh.rows)
			if err := argmax(v, dev, out, x, sh.rows, sh.cols); err != nil {
				t.Fatal(err)
			}
			got, err := out.Download()
			if err != nil {
				t.Fatal(err)
			}
			for r := range want {
				if got[r] != want[r] {
					t.Errorf("v%d %dx%d: row %d: argmax %d (%g), want %d (%g)", v, sh.rows, sh.cols, r,
						got[r], xs[r*sh.cols+int(got[r])], want[r], xs[r*sh.cols+int(want[r])])
				}
			}
		}
	}
}

func slicesMax(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func TestArgmaxShapeErrors(t *testing.T) {
	dev := kern.OpenNative()
	x, out := alloc[float32](t, dev, 12), alloc[int32](t, dev, 3)
	wantErr(t, "out", Argmax(dev, out, x, 4, 3), "ops.Argmax", "out has 3 elements, want rows = 4")
	wantErr(t, "x", Argmax(dev, out, x, 3, 5), "ops.Argmax", "x has 12 elements, want rows×cols = 15")
	wantErr(t, "cols", Argmax(dev, out, x, 3, 0), "ops.Argmax", "cols = 0")
	wantErr(t, "huge", Argmax(dev, out, x, 1, 1<<40), "ops.Argmax", fmt.Sprint("want at most ", maxArgCols))
}
