package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// TestMatmulInt8 checks the W8A8 GEMM against float64 on random int8
// values at ragged shapes (k not a multiple of 4 or 32, partial tiles),
// every output type, each version (v2 and the GEMV where K is a multiple
// of 16: partial k tiles, m and n past one tile; the GEMV at M = 1, 7 and
// 16, N not a multiple of its 8 rows per block, K not a multiple of its
// 128-byte step) and the automatic choice.
func TestMatmulInt8(t *testing.T) {
	runs := []struct {
		v      int
		name   string
		shapes []mmCase
	}{
		{i8V1, "v1", []mmCase{{1, 1, 8}, {17, 9, 37}, {40, 33, 130}}},
		{i8V2, "v2", []mmCase{{1, 1, 16}, {77, 129, 208}, {130, 140, 64}}},
		{i8GEMV, "gemv", []mmCase{{1, 1, 16}, {7, 129, 208}, {16, 300, 1040}}},
		{i8Auto, "auto", []mmCase{{16, 9, 32}, {17, 9, 32}, {3, 9, 37}}},
	}
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		for _, r := range runs {
			for _, sh := range r.shapes {
				name := fmt.Sprintf("%s/%dx%dx%d", r.name, sh.m, sh.n, sh.k)
				eachType(t,
					func(t *testing.T) { testMatmulInt8[float32](t, dev, r.v, sh, name) },
					func(t *testing.T) { testMatmulInt8[gpu.Half](t, dev, r.v, sh, name) },
					func(t *testing.T) { testMatmulInt8[gpu.BFloat16](t, dev, r.v, sh, name) })
			}
		}
	})
}

func testMatmulInt8[T Float](t *testing.T, dev *kern.Device, v int, sh mmCase, name string) {
	m, n, k := sh.m, sh.n, sh.k
	rng := rand.New(rand.NewPCG(uint64(m), uint64(n*k)))
	a, w := make([]int8, m*k), make([]int8, n*k)
	for i := range a {
		a[i] = int8(rng.IntN(255) - 127)
	}
	for i := range w {
		w[i] = int8(rng.IntN(255) - 127)
	}
	as, ws := make([]float32, m), make([]float32, n)
	for i := range as {
		as[i] = float32(0.001 + 0.01*rng.Float64())
	}
	for i := range ws {
		ws[i] = float32(0.001 + 0.01*rng.Float64())
	}
	want := make([]float64, m*n)
	for i := range m {
		for j := range n {
			s := int64(0)
			for e := range k {
				s += int64(a[i*k+e]) * int64(w[j*k+e])
			}
			want[i*n+j] = float64(as[i]) * float64(ws[j]) * float64(s)
		}
	}
	c := alloc[T](t, dev, m*n)
	if err := matmulInt8(v, dev, c, uploadT(t, dev, a), uploadT(t, dev, as), uploadT(t, dev, w), uploadT(t, dev, ws), m, n, k); err != nil {
		t.Fatal(name, err)
	}
	// The sum is exact; two float32 products and the int32 → float32
	// conversion round (3 units), then one rounding to T.
	compare(t, name+" c", download(t, c), want, outTol[T](3), nil)
}

func TestMatmulInt8Errors(t *testing.T) {
	dev := testDevices[0].dev
	c := alloc[float32](t, dev, 4)
	wantErr(t, "a", MatmulInt8(dev, c, alloc[int8](t, dev, 5), alloc[float32](t, dev, 2), alloc[int8](t, dev, 6), alloc[float32](t, dev, 2), 2, 2, 3), "ops.MatmulInt8", "a has 5 elements", "m×k = 2×3")
	wantErr(t, "wScales", MatmulInt8(dev, c, alloc[int8](t, dev, 6), alloc[float32](t, dev, 2), alloc[int8](t, dev, 6), alloc[float32](t, dev, 3), 2, 2, 3), "wScales has 3 elements")
}

// TestMatmulInt8Qwen3 runs v2 and the GEMV at Qwen3 layer shapes scaled
// for the emulator (a 128-token prefill and 1- and 16-token decode steps,
// K = N = 1024), on the emulator only.
func TestMatmulInt8Qwen3(t *testing.T) {
	if testing.Short() {
		t.Skip("large shape")
	}
	for _, m := range []int{128, 1, 16} {
		testMatmulInt8[gpu.BFloat16](t, testDevices[0].dev, i8Auto, mmCase{m, 1024, 1024}, fmt.Sprintf("%dx1024x1024", m))
	}
}
