package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// refMatmul is the float64 reference of Matmul, and the scale of each
// output's error: Σ|a·b| (the float32 accumulation's error is relative to
// it) plus the magnitudes the epilogue adds.
func refMatmul(a, b, bias, res []float64, m, n, k int, layout BLayout, act Activation) (out, scale []float64) {
	cn := n
	if act == ActSwiGLU {
		cn = n / 2
	}
	out, scale = make([]float64, m*cn), make([]float64, m*cn)
	pre, preAbs := make([]float64, n), make([]float64, n)
	for i := range m {
		for j := range n {
			s, sa := 0.0, 0.0
			for l := range k {
				bv := b[j*k+l]
				if layout == RowMajorKN {
					bv = b[l*n+j]
				}
				s += a[i*k+l] * bv
				sa += math.Abs(a[i*k+l] * bv)
			}
			if bias != nil {
				s += bias[j]
				sa += math.Abs(bias[j])
			}
			pre[j], preAbs[j] = s, sa
		}
		for j := range cn {
			var v, sc float64
			switch act {
			case ActSwiGLU:
				g, u := pre[2*j], pre[2*j+1]
				sg := 1 / (1 + math.Exp(-g))
				v = g * sg * u
				// d/dg (g·σ(g)) ≤ 1.1; the error of g and u scales by the other factor
				sc = 1.1*preAbs[2*j]*math.Abs(u) + math.Abs(g*sg)*preAbs[2*j+1]
			case ActSiLU:
				v, sc = pre[j]/(1+math.Exp(-pre[j])), 1.1*preAbs[j]
			case ActGELU:
				v, sc = 0.5*pre[j]*(1+math.Erf(pre[j]/math.Sqrt2)), 1.2*preAbs[j]
			default:
				v, sc = pre[j], preAbs[j]
			}
			if res != nil {
				v += res[i*cn+j]
				sc += math.Abs(res[i*cn+j])
			}
			out[i*cn+j], scale[i*cn+j] = v, sc
		}
	}
	return out, scale
}

// matmulTol: the tensor cores sum products exactly or in float32 (each
// addition one rounding, at most ~k of them in the chain), so the error is
// about k·2^-24 of Σ|a·b|, here bounded by 2^-24·(k+16) relative to the
// scale; the epilogue adds a few float32 units, the output one unit of O.
func matmulTol[O Float](k int) tol {
	t := outTol[O](16)
	t.srel = float64(k+16) * 0x1p-24
	return t
}

type mmCase struct{ m, n, k int }

// matmulShapes are the default shapes: one element with k a single
// chunk, ragged edges in every dimension, more than one block tile and a
// k that is not a multiple of BK.
var matmulShapes = []mmCase{{1, 1, 8}, {77, 129, 200}, {16, 64, 32}, {130, 72, 48}}

func TestMatmul(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		for _, sh := range matmulShapes {
			for _, lay := range []BLayout{WeightNK, RowMajorKN} {
				name := fmt.Sprintf("%dx%dx%d/%v", sh.m, sh.n, sh.k, lay)
				t.Run(name+"/bf16-bf16", func(t *testing.T) { testMatmul[gpu.BFloat16, gpu.BFloat16](t, dev, sh, lay, ActNone, false, false) })
				t.Run(name+"/f16-f32", func(t *testing.T) { testMatmul[gpu.Half, float32](t, dev, sh, lay, ActNone, false, false) })
			}
		}
	})
}

func (l BLayout) String() string {
	if l == RowMajorKN {
		return "kn"
	}
	return "nk"
}

func testMatmul[In Half16, O Float](t *testing.T, dev *kern.Device, sh mmCase, lay BLayout, act Activation, bias, res bool) {
	m, n, k := sh.m, sh.n, sh.k
	rng := rand.New(rand.NewPCG(uint64(m*131+n), uint64(k)))
	a, a64 := uploadIn[In](t, dev, randn(rng, m*k, 1))
	b, b64 := uploadIn[In](t, dev, randn(rng, n*k, 1/math.Sqrt(float64(k))))
	cn := n
	if act == ActSwiGLU {
		cn = n / 2
	}
	var o MatmulOpts[O]
	o.Layout, o.Act = lay, act
	var bias64, res64 []float64
	if bias {
		o.Bias, bias64 = upload[O](t, dev, randn(rng, n, 1))
	}
	if res {
		o.Residual, res64 = upload[O](t, dev, randn(rng, m*cn, 1))
	}
	c := alloc[O](t, dev, m*cn)
	if err := Matmul(dev, c, a, b, m, n, k, o); err != nil {
		t.Fatal(err)
	}
	want, scale := refMatmul(a64, b64, bias64, res64, m, n, k, lay, act)
	compare(t, "c", download(t, c), want, matmulTol[O](k), scale)
}

// uploadIn is upload for the 16-bit input types.
func uploadIn[In Half16](t testing.TB, dev *kern.Device, xs []float64) (*kern.Buffer[In], []float64) {
	t.Helper()
	r := make([]In, len(xs))
	w := make([]float64, len(xs))
	for i, x := range xs {
		switch p := any(&r[i]).(type) {
		case *gpu.Half:
			*p = gpu.ToHalf(float32(x))
			w[i] = float64(p.Float32())
		case *gpu.BFloat16:
			*p = gpu.ToBFloat16(float32(x))
			w[i] = float64(p.Float32())
		}
	}
	buf, err := kern.Upload(dev, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Free() })
	return buf, w
}

var _ = os.Getenv
