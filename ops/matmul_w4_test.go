package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/w4"
)

// TestMatmulInt4 checks both versions against float64 over the weights
// as QuantizeInt4 stores them: ragged m and n, k past one step or k tile
// and not a multiple of the group, more rows of x than one pass, every
// kernel (input and output type) of each version, and what MatmulInt4
// picks by itself on either side of int4GEMVMaxM and of w4.TCMaxGroups.
func TestMatmulInt4(t *testing.T) {
	type run struct {
		v    int
		name string
		sh   []mmCase
	}
	runs := []run{
		{w4GEMV, "gemv", []mmCase{{1, 9, 32}, {1, 1, 128}, {3, 37, 544}, {6, 16, 1024}, {17, 20, 96}}},
		{w4GEMVTC, "gemv-tc", []mmCase{{1, 9, 32}, {1, 1, 128}, {3, 37, 544}, {8, 33, 1056}, {16, 16, 256}, {11, 40, 640}}},
		{w4GEMM, "gemm", []mmCase{{1, 1, 128}, {3, 37, 544}, {77, 129, 256}, {65, 130, 96}}},
		{w4Auto, "auto", []mmCase{{1, 64, 4096}, {1, 16, 128 * (w4.TCMaxGroups + 1)}, {16, 24, 256}, {18, 24, 256}}},
	}
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		for _, r := range runs {
			for _, sh := range r.sh {
				name := fmt.Sprintf("%s/%dx%dx%d", r.name, sh.m, sh.n, sh.k)
				t.Run(name+"/bf16-bf16", func(t *testing.T) { testMatmulInt4[gpu.BFloat16, gpu.BFloat16](t, dev, r.v, sh) })
				t.Run(name+"/f16-f32", func(t *testing.T) { testMatmulInt4[gpu.Half, float32](t, dev, r.v, sh) })
			}
			sh := r.sh[len(r.sh)-1]
			name := fmt.Sprintf("%s/%dx%dx%d", r.name, sh.m, sh.n, sh.k)
			t.Run(name+"/f16-f16", func(t *testing.T) { testMatmulInt4[gpu.Half, gpu.Half](t, dev, r.v, sh) })
			t.Run(name+"/bf16-f32", func(t *testing.T) { testMatmulInt4[gpu.BFloat16, float32](t, dev, r.v, sh) })
		}
	})
}

// TestMatmulInt4Qwen3 runs the GEMM at Qwen3 layer shapes scaled so that
// the emulator finishes (K = 1024, N = 1024 and 3072, a prefill of 128
// tokens), on the emulator only: native mode agrees at the small shapes.
func TestMatmulInt4Qwen3(t *testing.T) {
	if testing.Short() {
		t.Skip("large shapes")
	}
	dev := testDevices[0].dev
	for _, sh := range []mmCase{{128, 1024, 1024}, {48, 3072, 1024}} {
		t.Run(fmt.Sprintf("%dx%dx%d", sh.m, sh.n, sh.k), func(t *testing.T) { testMatmulInt4[gpu.BFloat16, float32](t, dev, w4Auto, sh) })
	}
}

func testMatmulInt4[In Half16, O Float](t *testing.T, dev *kern.Device, v int, sh mmCase) {
	m, n, k := sh.m, sh.n, sh.k
	rng := rand.New(rand.NewPCG(uint64(m*7+n), uint64(k)))
	x, x64 := uploadIn[In](t, dev, randn(rng, m*k, 1))
	w := make([]float32, n*k)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	packed, scales, err := QuantizeInt4(w, n, k)
	if err != nil {
		t.Fatal(err)
	}
	groups := (k + Int4Group - 1) / Int4Group
	want, scale := make([]float64, m*n), make([]float64, m*n)
	for i := range m {
		for j := range n {
			for e := range k {
				nib := int(packed[(j*k+e)/2]>>(4*(e%2))) & 15
				wv := float64(nib-8) * float64(scales[j*groups+e/Int4Group])
				want[i*n+j] += wv * x64[i*k+e]
				scale[i*n+j] += math.Abs(wv * x64[i*k+e])
			}
		}
	}
	c := alloc[O](t, dev, m*n)
	if err := matmulInt4(v, dev, c, x, uploadT(t, dev, packed), uploadT(t, dev, scales), m, n, k); err != nil {
		t.Fatal(err)
	}
	tl := matmulTol[O](k)
	if inIndex[In]() == 0 && v == w4GEMV {
		// f16 activations in GEMV v1: the products of each 8-element part
		// are summed in f16x2 (internal/w4's f16g), at most about 2⁻⁹ of
		// Σ|w·x|. The other versions sum in float32.
		tl.srel += 0x1p-9
	}
	compare(t, "c", download(t, c), want, tl, scale)
}

func TestMatmulInt4Errors(t *testing.T) {
	dev := testDevices[0].dev
	x := alloc[gpu.BFloat16](t, dev, 40)
	c := alloc[gpu.BFloat16](t, dev, 2)
	wantErr(t, "k", MatmulInt4(dev, c, x, alloc[uint8](t, dev, 40), alloc[float32](t, dev, 2), 1, 2, 40), "ops.MatmulInt4", "k = 40", "multiple of 32")
	wantErr(t, "packed", MatmulInt4(dev, c, alloc[gpu.BFloat16](t, dev, 32), alloc[uint8](t, dev, 5), alloc[float32](t, dev, 2), 1, 2, 32), "packed has 5 elements")
}
