package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// TestMatmulInt4 checks the W4A16 GEMV against float64 over the weights
// as QuantizeInt4 stores them: ragged n, k past one step and not a
// multiple of the group, more rows of x than one pass, both input types.
func TestMatmulInt4(t *testing.T) {
	shapes := []mmCase{{1, 9, 32}, {3, 37, 544}, {6, 16, 1024}}
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		for _, sh := range shapes {
			name := fmt.Sprintf("%dx%dx%d", sh.m, sh.n, sh.k)
			t.Run(name+"/bf16-bf16", func(t *testing.T) { testMatmulInt4[gpu.BFloat16, gpu.BFloat16](t, dev, sh) })
			t.Run(name+"/f16-f32", func(t *testing.T) { testMatmulInt4[gpu.Half, float32](t, dev, sh) })
		}
	})
}

func testMatmulInt4[In Half16, O Float](t *testing.T, dev *kern.Device, sh mmCase) {
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
	if err := MatmulInt4(dev, c, x, uploadT(t, dev, packed), uploadT(t, dev, scales), m, n, k); err != nil {
		t.Fatal(err)
	}
	tl := matmulTol[O](k)
	if inIndex[In]() == 0 {
		// f16 activations: the products of each 8-element part are summed
		// in f16x2 (internal/w4's f16g), at most about 2⁻⁹ of Σ|w·x|.
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
