package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/mmhw"
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

// mmVersion is one kernel version and config to check.
type mmVersion struct {
	name string
	v    int
	cfg  tcConfig
}

var mmVersions = []mmVersion{
	{"v1", mmV1, tcConfig{}},
	{"v2-" + matmulConfigs[0].name, mmV2, matmulConfigs[0]},
	{"v2-" + matmulConfigs[1].name, mmV2, matmulConfigs[1]},
	{"gemv", mmGEMV, tcConfig{}},
	{"gemv-v1", mmGEMVv1, tcConfig{}},
	{"gemv-v3", mmGEMVv3, tcConfig{}},
	{"v3-sm90a", mmHopper, tcConfig{}},
	{"v3-sm90a-128x256", mmHopperWide, tcConfig{}},
}

// applies says whether version v runs shape sh with layout lay.
func (v mmVersion) applies(sh mmCase, lay BLayout) bool {
	switch v.v {
	case mmV2: // not the decode shapes: slow in native mode, and 1×1×8 covers a short m
		return sh.k%8 == 0 && (lay == WeightNK || sh.n%8 == 0) && (sh.m > 16 || sh.k <= 256)
	case mmGEMV, mmGEMVv1, mmGEMVv3:
		return sh.k%8 == 0 && lay == WeightNK && sh.m <= 16
	case mmHopper: // every shape with 16-byte row strides, the decode ones too
		return sh.k%8 == 0 && (lay == WeightNK || sh.n%8 == 0)
	case mmHopperWide: // W[N,K] only
		return sh.k%8 == 0 && lay == WeightNK
	}
	return true
}

// matmulShapes are the default shapes: one element with k a single
// chunk, ragged edges in every dimension (77×129×200), more than one
// block tile in m with k not a multiple of BK, a k that is not a multiple
// of 8 (v1 only), and decode shapes (m ≤ 16: GEMV) with an odd n, k
// past one GEMV step and more than gemv's rows per pass; 9×23×1064: the
// GEMV v2's second tile of x with a single row in it, n past a block's
// 16 rows, and k with full unrolled iterations and a last chunk past K.
var matmulShapes = []mmCase{{1, 1, 8}, {77, 129, 200}, {130, 72, 48}, {5, 33, 27}, {3, 101, 520}, {16, 40, 1056}, {9, 23, 1064}}

// TestMatmul checks every version, type pair and layout against float64.
func TestMatmul(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		for _, sh := range matmulShapes {
			for _, ver := range mmVersions {
				for _, lay := range []BLayout{WeightNK, RowMajorKN} {
					if !ver.applies(sh, lay) {
						continue
					}
					name := fmt.Sprintf("%dx%dx%d/%s/%v", sh.m, sh.n, sh.k, ver.name, lay)
					o := mmOpts{layout: lay}
					t.Run(name+"/bf16-bf16", func(t *testing.T) { testMatmul[gpu.BFloat16, gpu.BFloat16](t, dev, ver, sh, o) })
					t.Run(name+"/bf16-f32", func(t *testing.T) { testMatmul[gpu.BFloat16, float32](t, dev, ver, sh, o) })
					t.Run(name+"/f16-f16", func(t *testing.T) { testMatmul[gpu.Half, gpu.Half](t, dev, ver, sh, o) })
					t.Run(name+"/f16-f32", func(t *testing.T) { testMatmul[gpu.Half, float32](t, dev, ver, sh, o) })
				}
			}
		}
	})
}

// TestMatmulEpilogues checks every activation with and without bias and
// residual, on every version.
func TestMatmulEpilogues(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		for _, ver := range mmVersions {
			sh := mmCase{37, 80, 64}
			switch ver.v {
			case mmGEMVv1:
				sh.m = 5
			case mmGEMV, mmGEMVv3: // both tiles of x (rows 0–7 and 8–12)
				sh.m = 13
			}
			for _, act := range []Activation{ActNone, ActSiLU, ActGELU, ActSwiGLU} {
				for _, br := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
					o := mmOpts{act: act, bias: br[0], res: br[1]}
					name := fmt.Sprintf("%s/act%d/bias=%v/res=%v", ver.name, act, br[0], br[1])
					t.Run(name+"/bf16-bf16", func(t *testing.T) { testMatmul[gpu.BFloat16, gpu.BFloat16](t, dev, ver, sh, o) })
					t.Run(name+"/f16-f32", func(t *testing.T) { testMatmul[gpu.Half, float32](t, dev, ver, sh, o) })
				}
			}
		}
	})
}

// TestMatmulQwen3 runs scaled Qwen3 layer shapes (hidden 1024, MLP 3072)
// on the emulator through the public API (which picks the version). The
// larger ones take tens of seconds: KERN_MATMUL_BIG=1 runs them.
func TestMatmulQwen3(t *testing.T) {
	shapes := []mmCase{{1, 4096, 1024}}
	if os.Getenv("KERN_MATMUL_BIG") != "" {
		shapes = append(shapes, mmCase{1, 1024, 1024}, mmCase{16, 1024, 1024}, mmCase{128, 1024, 1024}, mmCase{16, 3072, 1024}, mmCase{128, 3072, 1024})
	}
	dev := testDevices[0].dev
	for _, sh := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d", sh.m, sh.n, sh.k), func(t *testing.T) {
			testMatmul[gpu.BFloat16, gpu.BFloat16](t, dev, mmVersion{name: "auto"}, sh, mmOpts{})
		})
	}
}

// TestMatmulErrors checks that bad arguments are errors naming them.
func TestMatmulErrors(t *testing.T) {
	dev := testDevices[0].dev
	a := alloc[gpu.BFloat16](t, dev, 6)
	b := alloc[gpu.BFloat16](t, dev, 6)
	c := alloc[gpu.BFloat16](t, dev, 4)
	wantErr(t, "short a", Matmul(dev, c, a, b, 2, 2, 4, MatmulOpts[gpu.BFloat16]{}), "ops.Matmul", "a has 6 elements", "m×k = 2×4")
	wantErr(t, "odd swiglu", Matmul(dev, alloc[gpu.BFloat16](t, dev, 3), a, alloc[gpu.BFloat16](t, dev, 9), 3, 3, 3, MatmulOpts[gpu.BFloat16]{Act: ActSwiGLU}), "even n")
	wantErr(t, "bias", Matmul(dev, c, a, b, 2, 2, 3, MatmulOpts[gpu.BFloat16]{Bias: a}), "bias has 6 elements")
	wantErr(t, "cast", Matmul(dev, alloc[gpu.Half](t, dev, 4), a, b, 2, 2, 3, MatmulOpts[gpu.Half]{}), "bfloat16 inputs with float16 output")
	wantErr(t, "negative", Matmul(dev, c, a, b, -1, 2, 3, MatmulOpts[gpu.BFloat16]{}), "m = -1")
	wantErr(t, "huge", Matmul(dev, c, a, b, 1<<20, 2, 1<<12, MatmulOpts[gpu.BFloat16]{}), "a is 1048576×4096", "32-bit")
}

// mmOpts is what a test case sets of MatmulOpts.
type mmOpts struct {
	layout    BLayout
	act       Activation
	bias, res bool
}

func (l BLayout) String() string {
	if l == RowMajorKN {
		return "kn"
	}
	return "nk"
}

// testMatmul runs version ver (ver.v == 0: Matmul's own choice) on
// random inputs and compares with refMatmul.
func testMatmul[In Half16, O Float](t *testing.T, dev *kern.Device, ver mmVersion, sh mmCase, mo mmOpts) {
	if major, minor := dev.ComputeCapability(); (ver.v == mmHopper || ver.v == mmHopperWide) && dev.Kind() == "cuda" && (major != 9 || minor != 0) {
		t.Skipf("the sm_90a kernel loads only on compute capability 9.0, this GPU is %d.%d", major, minor)
	}
	if ver.v == mmHopperWide {
		switch dev.Kind() {
		case "emu":
			dev = sm90Emu // 227 KiB of shared memory, as on an H100
		case "native":
			t.Skipf("v3 128x256 needs %d bytes of shared memory, native mode allows %d", mmhw.SharedBytes(2)+1024, dev.Limits().MaxSharedPerBlock)
		}
	}
	m, n, k := sh.m, sh.n, sh.k
	if mo.act == ActSwiGLU {
		n &^= 1
	}
	rng := rand.New(rand.NewPCG(uint64(m*131+n), uint64(k)))
	a, a64 := uploadIn[In](t, dev, randn(rng, m*k, 1))
	b, b64 := uploadIn[In](t, dev, randn(rng, n*k, 1/math.Sqrt(float64(k))))
	cn := n
	if mo.act == ActSwiGLU {
		cn = n / 2
	}
	o := MatmulOpts[O]{Layout: mo.layout, Act: mo.act}
	var bias64, res64 []float64
	if mo.bias {
		o.Bias, bias64 = upload[O](t, dev, randn(rng, n, 1))
	}
	if mo.res {
		o.Residual, res64 = upload[O](t, dev, randn(rng, m*cn, 1))
	}
	c := alloc[O](t, dev, m*cn)
	var err error
	if ver.v == 0 {
		err = Matmul(dev, c, a, b, m, n, k, o)
	} else {
		s := newShape("ops.Matmul")
		if _, err = matmulCheck(s, c, a, b, m, n, k, o); err == nil {
			err = matmulRun(s, ver.v, ver.cfg, dev, c, a, b, m, n, k, o)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	want, scale := refMatmul(a64, b64, bias64, res64, m, n, k, mo.layout, mo.act)
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

// TestMatmulConfigSlots checks what mm's v2 kernel assumes of a config:
// A and B take the same number of 16-byte copies per thread per stage
// (the kernel computes it from A's tile), 2 or at most mm's 4 slots, and
// a whole number of them.
func TestMatmulConfigSlots(t *testing.T) {
	for _, c := range matmulConfigs {
		a, b := c.bm()*4, c.bn()*4 // 16-byte chunks of a stage: 32 k × 2 bytes = 4 per row
		if a%c.threads() != 0 || a != b {
			t.Errorf("%s: A has %d chunks, B %d, for %d threads: want equal multiples", c.name, a, b, c.threads())
			continue
		}
		if s := a / c.threads(); s != 2 && s != 4 {
			t.Errorf("%s: %d copies per thread per operand, the kernel unrolls 2 or 4", c.name, s)
		}
	}
}
