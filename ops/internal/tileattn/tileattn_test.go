package tileattn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/ptxas"
	"github.com/gokern/kern/ops/internal/attnk"
)

// TestPTXAssembles assembles the package's PTX for sm_80 and sm_90 and
// requires every kernel to compile without register spills.
func TestPTXAssembles(t *testing.T) {
	ptxas.CheckModule(t, "tileattn", kernModule.PTX)
}

// attnCase is a varlen batch: query and key lengths per sequence.
type attnCase struct {
	lq, lk         []int
	heads, kvHeads int
	hd             int
	causal         bool
}

func (c attnCase) String() string {
	return fmt.Sprintf("causal=%v/q%vk%v/h%d_kv%d_d%d", c.causal, c.lq, c.lk, c.heads, c.kvHeads, c.hd)
}

// cases are ops' FlashAttention cases at head dims 64 and 128 (ops/
// flash_test.go): lengths 1, 17, 64, 257 (ends mid-tile, on a tile
// boundary, in the fifth tile), causal and not, GQA 1 to 8, varlen
// batches with unequal query and key lengths and an empty key sequence.
var cases = []attnCase{
	{lq: []int{1}, lk: []int{1}, heads: 2, kvHeads: 2, hd: 64},
	{lq: []int{17}, lk: []int{17}, heads: 2, kvHeads: 1, hd: 128, causal: true},
	{lq: []int{64}, lk: []int{64}, heads: 4, kvHeads: 1, hd: 64},
	{lq: []int{64}, lk: []int{64}, heads: 2, kvHeads: 2, hd: 128, causal: true},
	{lq: []int{257}, lk: []int{257}, heads: 8, kvHeads: 1, hd: 64, causal: true},
	{lq: []int{257}, lk: []int{257}, heads: 2, kvHeads: 1, hd: 128},
	{lq: []int{1, 17, 64, 100}, lk: []int{1, 17, 64, 100}, heads: 4, kvHeads: 2, hd: 64, causal: true},
	{lq: []int{3, 70, 17, 1}, lk: []int{40, 70, 5, 0}, heads: 2, kvHeads: 1, hd: 128, causal: true},
	{lq: []int{3, 70, 17}, lk: []int{40, 129, 5}, heads: 8, kvHeads: 2, hd: 64},
}

// kernels[twin][bf16][hd/128] are the tile kernels (twin 0) and attnk's.
var kernels = [2][2][2]*kern.Kernel{
	{{FlashF16D64Kernel.Kernel(), FlashF16D128Kernel.Kernel()}, {FlashBF16D64Kernel.Kernel(), FlashBF16D128Kernel.Kernel()}},
	{{attnk.FlashF16D64Kernel.Kernel(), attnk.FlashF16D128Kernel.Kernel()}, {attnk.FlashBF16D64Kernel.Kernel(), attnk.FlashBF16D128Kernel.Kernel()}},
}

// TestFlashAttention checks out and lse against float64 on the emulator
// and in native mode, f16 and bf16, with the tolerance ops' test derives
// (ops/flash_test.go runAttn), and on the emulator requires the same bits
// as the warp-level twin (the same products and sums in the same order).
func TestFlashAttention(t *testing.T) {
	for _, dev := range []struct {
		name string
		d    *kern.Device
	}{{"emu", kern.OpenEmulator()}, {"native", kern.OpenNative()}} {
		for i, c := range cases {
			if dev.name == "native" && sum(c.lq)*c.heads > 600 {
				continue // a goroutine per thread: the emulator covers the big shapes
			}
			t.Run(dev.name+"/"+c.String(), func(t *testing.T) {
				t.Run("f16", func(t *testing.T) { run[gpu.Half](t, dev.d, c, uint64(i), dev.name == "emu") })
				t.Run("bf16", func(t *testing.T) { run[gpu.BFloat16](t, dev.d, c, uint64(i), dev.name == "emu") })
			})
		}
	}
}

type half interface{ gpu.Half | gpu.BFloat16 }

func conv[T half](x float32) T {
	var z T
	if _, ok := any(z).(gpu.Half); ok {
		return T(gpu.ToHalf(x))
	}
	return T(gpu.ToBFloat16(x))
}

func float[T half](x T) float64 {
	if h, ok := any(x).(gpu.Half); ok {
		return float64(h.Float32())
	}
	return float64(any(x).(gpu.BFloat16).Float32())
}

// randn returns n values N(0, 1), one in ten scaled by 10^-2 … 10^2
// (inputs across magnitudes), rounded to T, and their float64 values.
func randn[T half](rng *rand.Rand, n int) ([]T, []float64) {
	xs, ws := make([]T, n), make([]float64, n)
	for i := range xs {
		v := rng.NormFloat64()
		if rng.IntN(10) == 0 {
			v *= math.Pow(10, float64(rng.IntN(5)-2))
		}
		xs[i] = conv[T](float32(v))
		ws[i] = float[T](xs[i])
	}
	return xs, ws
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

func offsets(lens []int) []int32 {
	cu := []int32{0}
	for _, n := range lens {
		cu = append(cu, cu[len(cu)-1]+int32(n))
	}
	return cu
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// launch runs kernel twin (0: the tile kernel) on c's buffers as
// ops.FlashAttention launches the twin, and returns out and lse.
func launch[T half](t *testing.T, d *kern.Device, twin int, c attnCase, q, k, v []T, scale float32) ([]T, []float32) {
	t.Helper()
	bf := 0
	if _, ok := any(q[0]).(gpu.BFloat16); ok {
		bf = 1
	}
	totalQ := sum(c.lq)
	out := must(kern.Alloc[T](d, len(q)))
	lse := must(kern.Alloc[float32](d, c.heads*totalQ))
	cuQ, cuK := must(kern.Upload(d, offsets(c.lq))), must(kern.Upload(d, offsets(c.lk)))
	qb, kb, vb := must(kern.Upload(d, q)), must(kern.Upload(d, k)), must(kern.Upload(d, v))
	maxQ := 1
	for _, n := range c.lq {
		maxQ = max(maxQ, n)
	}
	grid := kern.Blocks(gpu.Dim3{X: (maxQ + 63) / 64, Y: c.heads, Z: len(c.lq)}, gpu.Dim3{X: 128, Y: 1, Z: 1}).
		WithShared(5 * 64 * (c.hd + 8) * 2)
	err := kernels[twin][bf][c.hd/128].Launch(d, grid, kern.BufferArg(out), kern.BufferArg(qb), kern.BufferArg(kb), kern.BufferArg(vb),
		kern.BufferArg(lse), kern.BufferArg(cuQ), kern.BufferArg(cuK), kern.ScalarArg(c.heads), kern.ScalarArg(c.kvHeads),
		kern.ScalarArg(scale*math.Log2E), kern.ScalarArg(c.causal), kern.ScalarArg(true))
	if err != nil {
		t.Fatal(err)
	}
	return must(out.Download()), must(lse.Download())
}

func run[T half](t *testing.T, d *kern.Device, c attnCase, seed uint64, twin bool) {
	rng := rand.New(rand.NewPCG(seed, uint64(len(c.lq))))
	totalQ, totalK := sum(c.lq), sum(c.lk)
	q, qw := randn[T](rng, totalQ*c.heads*c.hd)
	k, kw := randn[T](rng, totalK*c.kvHeads*c.hd)
	v, vw := randn[T](rng, totalK*c.kvHeads*c.hd)
	scale := float32(1 / math.Sqrt(float64(c.hd)))
	out, lse := launch(t, d, 0, c, q, k, v, scale)
	wantO, wantL, mag, magAbs := reference(c, qw, kw, vw, float64(scale))
	// ops' tolerance: one unit of T per term of P·V relative to Σ p|v|
	// (P is rounded to T), for float16 plus 2^-25 absolute per
	// unnormalised term (folded into mag), exp2.approx's 2^-20, one
	// rounding of the result.
	u, tiny, pTiny := 0x1p-8, 0x1p-126, 0.0
	if _, ok := any(q[0]).(gpu.Half); ok {
		u, tiny, pTiny = 0x1p-11, 0x1p-25, 0x1p-25
	}
	bad := 0
	for i, w := range wantO {
		if e, allowed := math.Abs(float[T](out[i])-w), tiny+(u+0x1p-20)*math.Abs(w)+2*u*mag[i]+pTiny*magAbs[i]; !(e <= allowed) {
			if bad++; bad < 5 {
				t.Errorf("out[%d] = %g, want %g (|err| %.3g > %.3g)", i, float[T](out[i]), w, e, allowed)
			}
		}
	}
	for i, w := range wantL {
		g := float64(lse[i])
		if math.IsInf(w, -1) {
			if !math.IsInf(g, -1) {
				t.Errorf("lse[%d] = %g, want -Inf (no keys)", i, g)
			}
		} else if e := math.Abs(g - w); !(e <= 4e-5+4e-6*math.Abs(w)) {
			if bad++; bad < 5 {
				t.Errorf("lse[%d] = %g, want %g", i, g, w)
			}
		}
	}
	if !twin {
		return
	}
	tOut, tLSE := launch(t, d, 1, c, q, k, v, scale)
	for i := range out {
		if out[i] != tOut[i] {
			t.Fatalf("out[%d] = %g, the twin's %g", i, float[T](out[i]), float[T](tOut[i]))
		}
	}
	for i := range lse {
		if math.Float32bits(lse[i]) != math.Float32bits(tLSE[i]) {
			t.Fatalf("lse[%d] = %g, the twin's %g", i, lse[i], tLSE[i])
		}
	}
}

// reference is attention in float64: out [totalQ, heads, hd], lse
// [heads, totalQ], and per output element Σ_j p_j·|v_j| and Σ_j |v_j|/ℓ
// over the unmasked keys (ops/flash_test.go's attnRef).
func reference(c attnCase, q, k, v []float64, scale float64) (out, lse, mag, magAbs []float64) {
	totalQ := len(q) / (c.heads * c.hd)
	out, mag, magAbs = make([]float64, len(q)), make([]float64, len(q)), make([]float64, len(q))
	lse = make([]float64, c.heads*totalQ)
	qs, ks := 0, 0
	for b := range c.lq {
		lq, lk := c.lq[b], c.lk[b]
		for h := range c.heads {
			kh := h / (c.heads / c.kvHeads)
			for i := range lq {
				qi := q[((qs+i)*c.heads+h)*c.hd:][:c.hd]
				s := make([]float64, lk)
				mx := math.Inf(-1)
				for j := range lk {
					s[j] = math.Inf(-1)
					if c.causal && j > i+lk-lq {
						continue
					}
					kj := k[((ks+j)*c.kvHeads+kh)*c.hd:][:c.hd]
					dot := 0.0
					for d := range c.hd {
						dot += qi[d] * kj[d]
					}
					s[j] = dot * scale
					mx = math.Max(mx, s[j])
				}
				lse[h*totalQ+qs+i] = math.Inf(-1)
				if math.IsInf(mx, -1) {
					continue
				}
				l := 0.0
				for j := range lk {
					s[j] = math.Exp(s[j] - mx)
					l += s[j]
				}
				lse[h*totalQ+qs+i] = mx + math.Log(l)
				o := ((qs+i)*c.heads + h) * c.hd
				for j := range lk {
					if s[j] == 0 {
						continue
					}
					vj := v[((ks+j)*c.kvHeads+kh)*c.hd:][:c.hd]
					for d := range c.hd {
						out[o+d] += s[j] / l * vj[d]
						mag[o+d] += s[j] / l * math.Abs(vj[d])
						magAbs[o+d] += math.Abs(vj[d]) / l
					}
				}
			}
		}
		qs += lq
		ks += lk
	}
	return out, lse, mag, magAbs
}

// TestProfile profiles the tile kernel and its twin on the emulator at
// ops' TestFlashAttentionBankConflicts shape (ragged lengths 70 and 5
// against 70 and 130 keys, causal) and at whole tiles (128 and 128),
// head dims 64 and 128: no bank conflicts on any shared access (the
// cp.async stores, ldmatrix and ldmatrix.trans), the tiles' cp.async
// loads 100% sector-efficient at whole tiles and no less than the twin's
// when ragged.
func TestProfile(t *testing.T) {
	for i, hd := range []int{64, 128, 64, 128} {
		c := attnCase{lq: []int{70, 5}, lk: []int{70, 130}, heads: 2, kvHeads: 1, hd: hd, causal: true}
		if i >= 2 {
			c = attnCase{lq: []int{128}, lk: []int{128}, heads: 2, kvHeads: 1, hd: hd}
		}
		var eff [2]float64
		for twin := range 2 {
			p := emu.NewProfile()
			d := kern.OpenEmulator(emu.Options{Observer: p})
			rng := rand.New(rand.NewPCG(1, 2))
			q, _ := randn[gpu.Half](rng, sum(c.lq)*c.heads*hd)
			k, _ := randn[gpu.Half](rng, sum(c.lk)*c.kvHeads*hd)
			v, _ := randn[gpu.Half](rng, sum(c.lk)*c.kvHeads*hd)
			launch(t, d, twin, c, q, k, v, 0.125)
			var bytes, sectors, conflicts, shared int64
			for _, st := range p.Stats() {
				conflicts += st.BankConflicts()
				shared += st.SharedRequests
				if strings.HasPrefix(st.Instr, "cp.async") { // the tiles (the scalar loads of cu are broadcasts)
					bytes += st.GlobalBytes
					sectors += st.GlobalSectors
				}
			}
			eff[twin] = float64(bytes) / float64(32*sectors)
			t.Logf("%v, %s: %d bank conflicts in %d shared requests, tile loads' sector efficiency %.1f%%",
				c, [2]string{"tile", "twin"}[twin], conflicts, shared, 100*eff[twin])
			if conflicts != 0 || shared == 0 {
				t.Errorf("hd %d, twin %d: %d bank conflicts in %d shared requests, want 0", hd, twin, conflicts, shared)
			}
		}
		if eff[0] < eff[1] || i >= 2 && eff[0] < 0.999 {
			t.Errorf("%v: sector efficiency %.3f, the twin's %.3f", c, eff[0], eff[1])
		}
	}
}

// TestErrors: offsets out of order or past the tokens, and a query
// sequence longer than the grid's rows, are device errors (tile.HeadSeq,
// tile.Heads), as the twin's.
func TestErrors(t *testing.T) {
	d := kern.OpenEmulator()
	for _, tc := range []struct {
		cuQ, cuK []int32
		blocks   int
		want     string
	}{
		{[]int32{0, 9}, []int32{0, 8}, 1, "cuSeqQ or cuSeqK"},
		{[]int32{0, 8}, []int32{0, 9}, 1, "cuSeqQ or cuSeqK"},
		{[]int32{0, 8}, []int32{0, 8}, 0, ""},
	} {
		out, q := must(kern.Alloc[gpu.Half](d, 8*2*64)), must(kern.Alloc[gpu.Half](d, 8*2*64))
		k, v := must(kern.Alloc[gpu.Half](d, 8*64)), must(kern.Alloc[gpu.Half](d, 8*64))
		lse := must(kern.Alloc[float32](d, 2*8))
		cuQ, cuK := must(kern.Upload(d, tc.cuQ)), must(kern.Upload(d, tc.cuK))
		grid := kern.Blocks(gpu.Dim3{X: 1, Y: 2, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1}).WithShared(5 * 64 * 72 * 2)
		err := FlashF16D64Kernel.Launch(d, grid, out, q, k, v, lse, cuQ, cuK, 2, 1, 0.125, true, true)
		if tc.want == "" {
			if err != nil {
				t.Errorf("cuQ %v, cuK %v: %v", tc.cuQ, tc.cuK, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("cuQ %v, cuK %v: error %v, want one naming %q", tc.cuQ, tc.cuK, err, tc.want)
		}
	}
	// 70 query rows, one block of 64.
	out, q := must(kern.Alloc[gpu.Half](d, 70*64)), must(kern.Alloc[gpu.Half](d, 70*64))
	k, v := must(kern.Alloc[gpu.Half](d, 70*64)), must(kern.Alloc[gpu.Half](d, 70*64))
	cuQ, cuK := must(kern.Upload(d, []int32{0, 70})), must(kern.Upload(d, []int32{0, 70}))
	lse := must(kern.Alloc[float32](d, 70))
	grid := kern.Blocks(gpu.Dim3{X: 1, Y: 1, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1}).WithShared(5 * 64 * 72 * 2)
	if err := FlashF16D64Kernel.Launch(d, grid, out, q, k, v, lse, cuQ, cuK, 1, 1, 0.125, false, true); err == nil || !strings.Contains(err.Error(), "longer than maxSeqQ") {
		t.Errorf("70 rows in one block: error %v, want one naming maxSeqQ", err)
	}
}

// TestChecks: the head-dim-64 kernels keep their bounds checks (the
// others are nobounds); what could fail still fails, as a device error
// with its Go position, on the emulator and in native mode: a V shorter
// than K's tokens at Stage's one check of the tile's source, a launch
// with less dynamic shared memory than the five slots at the cut of sm.
func TestChecks(t *testing.T) {
	for _, dev := range []struct {
		name string
		d    *kern.Device
	}{{"emu", kern.OpenEmulator()}, {"native", kern.OpenNative()}} {
		d := dev.d
		for _, tc := range []struct {
			name         string
			vTokens      int
			shared, want string
		}{
			{"ok", 70, "", ""},
			{"short V", 69, "", "flash.go:163"},
			{"little shared", 70, "small", "tileattn.go:51"},
		} {
			out, q := must(kern.Alloc[gpu.Half](d, 70*64)), must(kern.Alloc[gpu.Half](d, 70*64))
			k, v := must(kern.Alloc[gpu.Half](d, 70*64)), must(kern.Alloc[gpu.Half](d, tc.vTokens*64))
			cuQ, cuK := must(kern.Upload(d, []int32{0, 70})), must(kern.Upload(d, []int32{0, 70}))
			lse := must(kern.Alloc[float32](d, 70))
			smem := 5 * 64 * 72 * 2
			if tc.shared != "" {
				smem = 4 * 64 * 72 * 2
			}
			grid := kern.Blocks(gpu.Dim3{X: 2, Y: 1, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1}).WithShared(smem)
			err := FlashF16D64Kernel.Launch(d, grid, out, q, k, v, lse, cuQ, cuK, 1, 1, 0.125, false, true)
			if err == nil {
				err = d.Sync()
			}
			var de *kern.DeviceError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s, %s: %v", dev.name, tc.name, err)
			case tc.want != "" && (!errors.As(err, &de) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s, %s: error %v, want a *kern.DeviceError at %s", dev.name, tc.name, err, tc.want)
			}
		}
	}
}
