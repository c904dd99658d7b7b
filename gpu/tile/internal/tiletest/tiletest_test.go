package tiletest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

const threads = 64 // the kernels' block=

func devices() []struct {
	name string
	dev  *kern.Device
} {
	return []struct {
		name string
		dev  *kern.Device
	}{{"emu", kern.OpenEmulator()}, {"native", kern.OpenNative()}}
}

// must returns v, or panics with err: buffer set-up failing in a test
// is a broken test machine, not a finding.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// refOps is Ops in float64 over the whole tile of K·threads elements,
// the masked ones included.
func refOps(a, b []float64, rows, cols int, c float64) (out, stats []float64) {
	n := K * threads
	for r := range rows {
		s, m, q := 0.0, math.Inf(-1), 0.0
		for e := range n {
			x, y := 0.0, 1.0
			if e < cols {
				x, y = a[r*cols+e], b[r*cols+e]
			}
			z := math.Exp((max((x+y)*(x-y)/y, c) + c - 0.5) * 2 / 4)
			if e < cols {
				out = append(out, z)
			}
			s, m, q = s+z, max(m, z), q+x*x
		}
		stats = append(stats, s, m, q)
	}
	return out, stats
}

// TestOps checks every tile operation against float64 on rows that are
// ragged (cols < K·threads), full, and one element, on a 2-D grid with
// more blocks than rows (their partitions are empty: they write nothing).
func TestOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const c = 0.3
	for _, d := range devices() {
		for _, sh := range []struct{ rows, cols int }{{3, 100}, {2, K * threads}, {4, 1}} {
			n := sh.rows * sh.cols
			af, bf := make([]float32, n), make([]float32, n)
			a, b := make([]float64, n), make([]float64, n)
			for i := range n {
				af[i], bf[i] = float32(0.5+1.5*rng.Float64()), float32(0.5+1.5*rng.Float64())
				a[i], b[i] = float64(af[i]), float64(bf[i])
			}
			out := must(kern.Alloc[float32](d.dev, n))
			stats := must(kern.Alloc[float32](d.dev, 3*sh.rows))
			// A 2-D grid of at least rows+1 blocks: RowOf is the linear
			// block index, so blocks of different Y own different rows.
			grid := kern.Blocks(gpu.Dim3{X: 2, Y: sh.rows/2 + 1, Z: 1}, gpu.Dim3{X: threads, Y: 1, Z: 1})
			if err := OpsKernel.Launch(d.dev, grid, out, stats, must(kern.Upload(d.dev, af)), must(kern.Upload(d.dev, bf)), sh.cols, c); err != nil {
				t.Fatal(err)
			}
			wantOut, wantStats := refOps(a, b, sh.rows, sh.cols, c)
			// Each element is a few float32 roundings and an exp (≤ 2 ulp):
			// 1e-6 relative; the sums add K·threads of them.
			check(t, d.name+" out", must(out.Download()), wantOut, func(int) float64 { return 1e-6 })
			check(t, d.name+" stats", must(stats.Download()), wantStats, func(int) float64 { return 1e-6 * K * threads })
		}
	}
}

func check(t *testing.T, what string, got []float32, want []float64, rel func(i int) float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if err := math.Abs(float64(got[i]) - want[i]); !(err <= rel(i)*math.Abs(want[i])) {
			t.Errorf("%s[%d] = %g, want %g (error %.3g, allowed %.3g)", what, i, got[i], want[i], err, rel(i)*math.Abs(want[i]))
			if bad++; bad == 10 {
				t.Fatalf("%s: stopping after 10 mismatches", what)
			}
		}
	}
}

// TestCodecs checks that f16 and bf16 storage load and store exactly
// (doubling is exact in both formats), on ragged rows.
func TestCodecs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const rows, cols = 3, 77
	x, xb := make([]gpu.Half, rows*cols), make([]gpu.BFloat16, rows*cols)
	for i := range x {
		v := float32(rng.NormFloat64())
		x[i], xb[i] = gpu.ToHalf(v), gpu.ToBFloat16(v)
	}
	for _, d := range devices() {
		h := must(kern.Alloc[gpu.Half](d.dev, rows*cols))
		hb := must(kern.Alloc[gpu.BFloat16](d.dev, rows*cols))
		grid := kern.Blocks(gpu.Dim3{X: rows, Y: 1, Z: 1}, gpu.Dim3{X: threads, Y: 1, Z: 1})
		if err := RoundTripKernel.Launch(d.dev, grid, h, hb, must(kern.Upload(d.dev, x)), must(kern.Upload(d.dev, xb)), cols); err != nil {
			t.Fatal(err)
		}
		gh, ghb := must(h.Download()), must(hb.Download())
		for i := range x {
			if want := gpu.ToHalf(2 * x[i].Float32()); gh[i] != want {
				t.Fatalf("%s f16[%d] = %v, want %v", d.name, i, gh[i].Float32(), want.Float32())
			}
			if want := gpu.ToBFloat16(2 * xb[i].Float32()); ghb[i] != want {
				t.Fatalf("%s bf16[%d] = %v, want %v", d.name, i, ghb[i].Float32(), want.Float32())
			}
		}
	}
}

// TestInt8 checks the I8 codec: rounding to nearest even (ties included)
// and saturation on the store, exact loads.
func TestInt8(t *testing.T) {
	const rows, cols, scale = 2, 100, 4
	x, p := make([]float32, rows*cols), make([]int8, rows*cols)
	for i := range x {
		x[i] = float32(i-cols)*0.375 + 0.125 // ties at ·0.5 after scaling, and values past ±128
		p[i] = int8(i*37 - 100)
	}
	x[3] = float32(math.NaN())
	for _, d := range devices() {
		q := must(kern.Alloc[int8](d.dev, rows*cols))
		back := must(kern.Alloc[float32](d.dev, rows*cols))
		grid := kern.Blocks(gpu.Dim3{X: rows, Y: 1, Z: 1}, gpu.Dim3{X: threads, Y: 1, Z: 1})
		if err := Int8Kernel.Launch(d.dev, grid, q, back, must(kern.Upload(d.dev, x)), must(kern.Upload(d.dev, p)), cols, scale); err != nil {
			t.Fatal(err)
		}
		gq, gb := must(q.Download()), must(back.Download())
		for i := range x {
			want := int8(0)
			if v := float64(x[i]) * scale; !math.IsNaN(v) {
				want = int8(math.Max(-128, math.Min(127, math.RoundToEven(v))))
			}
			if gq[i] != want {
				t.Fatalf("%s q[%d] = %d, want %d (x·scale = %g)", d.name, i, gq[i], want, float64(x[i])*scale)
			}
			if wb := float32(p[i]) / 2; gb[i] != wb {
				t.Fatalf("%s back[%d] = %g, want %g", d.name, i, gb[i], wb)
			}
		}
	}
}
