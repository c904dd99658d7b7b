package tiletest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// The 2-D tile of the kernels in mat.go: TM × TN with a block of threads.
const (
	tm = MI * threads / 32
	tn = MJ * 32
)

// matShapes are ragged in both dimensions, exact, and one element.
var matShapes = []struct{ rows, cols int }{{7, 100}, {2 * tm, tn}, {1, 1}, {tm + 1, 2*tn + 3}}

// matGrid covers rows × cols with tiles, plus a column of blocks whose
// tiles lie wholly outside the matrix (they must write nothing).
func matGrid(rows, cols int) kern.Grid {
	return kern.Blocks(gpu.Dim3{X: (cols+tn-1)/tn + 1, Y: (rows + tm - 1) / tm, Z: 1}, gpu.Dim3{X: threads, Y: 1, Z: 1})
}

// refMat2 is Mat2 in float64: a softmax along each row within its tile,
// and per column of each tile the sum plus the maximum (rows past the end
// count as 0).
func refMat2(a, scale, bias []float64, rows, cols int) (out, cs []float64) {
	out, cs = make([]float64, rows*cols), make([]float64, rows*cols)
	for r := range rows {
		for c0 := 0; c0 < cols; c0 += tn {
			hi := min(c0+tn, cols)
			m, s := math.Inf(-1), 0.0
			for c := c0; c < hi; c++ {
				m = max(m, a[r*cols+c]*scale[r]+bias[c])
			}
			for c := c0; c < hi; c++ {
				s += math.Exp(a[r*cols+c]*scale[r] + bias[c] - m)
			}
			for c := c0; c < hi; c++ {
				out[r*cols+c] = math.Exp(a[r*cols+c]*scale[r]+bias[c]-m) / s
			}
		}
	}
	for r0 := 0; r0 < rows; r0 += tm {
		for c := range cols {
			s, m := 0.0, math.Inf(-1)
			for r := r0; r < r0+tm; r++ {
				v := 0.0
				if r < rows {
					v = a[r*cols+c]
				}
				s, m = s+v, max(m, v)
			}
			for r := r0; r < min(r0+tm, rows); r++ {
				cs[r*cols+c] = s + m
			}
		}
	}
	return out, cs
}

// TestMat2 checks 2-D tile loads with masks, row and column broadcasts,
// and reductions along both axes against float64, on the emulator and in
// native mode.
func TestMat2(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range devices() {
		for _, sh := range matShapes {
			n := sh.rows * sh.cols
			af, sf, bf := make([]float32, n), make([]float32, sh.rows), make([]float32, sh.cols)
			a, sc, bi := make([]float64, n), make([]float64, sh.rows), make([]float64, sh.cols)
			for i := range af {
				af[i] = float32(0.5 + 1.5*rng.Float64()) // positive: no cancellation in the column sums
				a[i] = float64(af[i])
			}
			for i := range sf {
				sf[i] = float32(0.5 + 2*rng.Float64())
				sc[i] = float64(sf[i])
			}
			for i := range bf {
				bf[i] = float32(4 * rng.NormFloat64())
				bi[i] = float64(bf[i])
			}
			out := must(kern.Alloc[float32](d.dev, n))
			cs := must(kern.Alloc[float32](d.dev, n))
			if err := Mat2Kernel.Launch(d.dev, matGrid(sh.rows, sh.cols), out, cs, must(kern.Upload(d.dev, af)),
				must(kern.Upload(d.dev, sf)), must(kern.Upload(d.dev, bf)), sh.rows, sh.cols); err != nil {
				t.Fatal(err)
			}
			wantOut, wantCS := refMat2(a, sc, bi, sh.rows, sh.cols)
			// out: an exp of an argument with a few roundings of values up to
			// ~20 (≤ 20·2⁻²⁴ absolute, so 2e-6 relative) over a sum of ≤ 64:
			// 1e-5 relative. cs: ≤ tm positive float32 sums, 1e-6.
			check(t, d.name+" softmax", must(out.Download()), wantOut, func(int) float64 { return 1e-5 })
			check(t, d.name+" colsum+max", must(cs.Download()), wantCS, func(int) float64 { return 1e-6 })
		}
	}
}

// TestMatOps checks the element-wise ops and the f16 and bf16 codecs of
// 2-D tiles: every op rounds to float32, as the reference here does, so
// the bfloat16 results are exact.
func TestMatOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const c = float32(0.125)
	for _, d := range devices() {
		for _, sh := range matShapes {
			n := sh.rows * sh.cols
			x, y := make([]gpu.Half, n), make([]gpu.Half, n)
			want := make([]gpu.BFloat16, n)
			for i := range x {
				x[i], y[i] = gpu.ToHalf(float32(rng.NormFloat64())), gpu.ToHalf(float32(rng.NormFloat64()))
				v := max(x[i].Float32()-y[i].Float32(), c)
				v = float32(v+c) - 0.25
				v = float32(v*3) / 2
				want[i] = gpu.ToBFloat16(v)
			}
			out := must(kern.Alloc[gpu.BFloat16](d.dev, n))
			if err := MatOpsKernel.Launch(d.dev, matGrid(sh.rows, sh.cols), out, must(kern.Upload(d.dev, x)), must(kern.Upload(d.dev, y)), sh.rows, sh.cols, c); err != nil {
				t.Fatal(err)
			}
			got := must(out.Download())
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s %dx%d: out[%d] = %v, want %v", d.name, sh.rows, sh.cols, i, got[i].Float32(), want[i].Float32())
				}
			}
		}
	}
}
