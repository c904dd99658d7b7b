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

// attnCase is one FlashAttention test shape: a batch of sequences with
// their query and key lengths.
type attnCase struct {
	lq, lk         []int
	heads, kvHeads int
	hd             int
	causal         bool
}

func (c attnCase) String() string {
	cs := ""
	if c.causal {
		cs = "causal_"
	}
	lens := fmt.Sprint(c.lq)
	if fmt.Sprint(c.lk) != lens {
		lens += "x" + fmt.Sprint(c.lk)
	}
	return fmt.Sprintf("%sq%s_h%d_kv%d_d%d", cs, lens, c.heads, c.kvHeads, c.hd)
}

// attnRef is the float64 reference: out [totalQ, heads, hd] and lse
// [heads, totalQ] from q, k, v as FlashAttention lays them out, plus
// per output element Σ_j p_j·|v_j| (the magnitude the rounding of P to
// 16 bits is relative to) and Σ_j |v_j| / Σ_j exp(s_j - max s) over the
// unmasked keys (what an absolute error in each unnormalised P is
// multiplied by: float16 rounds P < 2^-14 to a subnormal step).
func attnRef(c attnCase, q, k, v []float64, scale float64) (out, lse, mag, magAbs []float64) {
	totalQ := len(q) / (c.heads * c.hd)
	out = make([]float64, len(q))
	mag = make([]float64, len(q))
	magAbs = make([]float64, len(q))
	lse = make([]float64, c.heads*totalQ)
	group := c.heads / c.kvHeads
	qs, ks := 0, 0
	for b := range c.lq {
		lq, lk := c.lq[b], c.lk[b]
		for h := range c.heads {
			kh := h / group
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
				oi := out[((qs+i)*c.heads+h)*c.hd:][:c.hd]
				mi := mag[((qs+i)*c.heads+h)*c.hd:][:c.hd]
				ai := magAbs[((qs+i)*c.heads+h)*c.hd:][:c.hd]
				lse[h*totalQ+qs+i] = math.Inf(-1)
				if math.IsInf(mx, -1) {
					continue
				}
				sum := 0.0
				for j := range lk {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				lse[h*totalQ+qs+i] = mx + math.Log(sum)
				for j := range lk {
					if c.causal && j > i+lk-lq {
						continue
					}
					p := s[j] / sum
					vj := v[((ks+j)*c.kvHeads+kh)*c.hd:][:c.hd]
					for d := range c.hd {
						oi[d] += p * vj[d]
						mi[d] += p * math.Abs(vj[d])
						ai[d] += math.Abs(vj[d]) / sum
					}
				}
			}
		}
		qs += lq
		ks += lk
	}
	return out, lse, mag, magAbs
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// runAttn runs FlashAttention on dev for case c and checks out and lse
// against float64.
func runAttn[T Half16](t *testing.T, dev *kern.Device, c attnCase, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(len(c.lq))))
	totalQ, totalK := sum(c.lq), sum(c.lk)
	q, qw := upload[T](t, dev, randn(rng, totalQ*c.heads*c.hd, 1))
	k, kw := upload[T](t, dev, randn(rng, totalK*c.kvHeads*c.hd, 1))
	v, vw := upload[T](t, dev, randn(rng, totalK*c.kvHeads*c.hd, 1))
	out := alloc[T](t, dev, totalQ*c.heads*c.hd)
	lse := alloc[float32](t, dev, c.heads*totalQ)
	cuQ, err := kern.Upload(dev, SeqOffsets(c.lq...))
	if err != nil {
		t.Fatal(err)
	}
	defer cuQ.Free()
	cuK, err := kern.Upload(dev, SeqOffsets(c.lk...))
	if err != nil {
		t.Fatal(err)
	}
	defer cuK.Free()
	a := Attention{Heads: c.heads, KVHeads: c.kvHeads, HeadDim: c.hd, Causal: c.causal, MaxSeqQ: max(1, maxOf(c.lq))}
	if err := FlashAttention(dev, out, q, k, v, lse, cuQ, cuK, a); err != nil {
		t.Fatal(err)
	}
	wantO, wantL, mag, magAbs := attnRef(c, qw, kw, vw, float64(a.scale()))
	// P is rounded to T before P·V: one unit of T per term relative to
	// Σ p|v|, plus for float16 half a subnormal step (2^-25) absolute per
	// unnormalised term, times Σ|v|/ℓ. The normalisation uses the
	// unrounded sum and the result is rounded to T once; scores and sums
	// are f32 with exp2.approx (the 2^-20).
	u := unit[T]()
	pTiny := 0.0
	if _, ok := any(*new(T)).(gpu.Half); ok {
		pTiny = 0x1p-25
	}
	for i := range mag {
		mag[i] += pTiny / (2 * u) * magAbs[i]
	}
	compare(t, "out", download(t, out), wantO, tol{abs: tiny[T](), rel: u + 0x1p-20, srel: 2 * u}, mag)
	gotL, err := lse.Download()
	if err != nil {
		t.Fatal(err)
	}
	gl := make([]float64, len(gotL))
	for i, x := range gotL {
		gl[i] = float64(x)
	}
	// LSE: f32 scores (error ≲ hd·2^-24·Σ|q||k|·scale ≈ 1e-5 here) plus
	// lg2.approx's 2^-22 and the sum's rounding.
	compare(t, "lse", gl, wantL, tol{abs: 4e-5, rel: 4e-6}, nil)
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// flashCases cover sequence lengths 1, 17, 64 and 257, causal and not,
// GQA ratios 1, 2, 4 and 8, head dims 64, 128 and 256, and varlen batches
// with mixed lengths (equal and unequal query and key lengths).
var flashCases = []attnCase{
	{lq: []int{1}, lk: []int{1}, heads: 2, kvHeads: 2, hd: 64},
	{lq: []int{17}, lk: []int{17}, heads: 2, kvHeads: 1, hd: 128, causal: true},
	{lq: []int{64}, lk: []int{64}, heads: 4, kvHeads: 1, hd: 64},
	{lq: []int{64}, lk: []int{64}, heads: 2, kvHeads: 2, hd: 128, causal: true},
	{lq: []int{257}, lk: []int{257}, heads: 8, kvHeads: 1, hd: 64, causal: true},
	{lq: []int{257}, lk: []int{257}, heads: 2, kvHeads: 1, hd: 128},
	{lq: []int{1, 17, 64, 100}, lk: []int{1, 17, 64, 100}, heads: 4, kvHeads: 2, hd: 64, causal: true},
	{lq: []int{3, 70, 17, 1}, lk: []int{40, 70, 5, 0}, heads: 2, kvHeads: 1, hd: 128, causal: true},
	{lq: []int{3, 70, 17}, lk: []int{40, 129, 5}, heads: 8, kvHeads: 2, hd: 64},
	// Head dim 256 (ops/internal/attn256: 32-key tiles, so 17, 64 and 150
	// end mid-tile, on a tile boundary and in the fifth tile).
	{lq: []int{1}, lk: []int{1}, heads: 2, kvHeads: 1, hd: 256},
	{lq: []int{17}, lk: []int{17}, heads: 2, kvHeads: 1, hd: 256, causal: true},
	{lq: []int{64}, lk: []int{64}, heads: 2, kvHeads: 2, hd: 256},
	{lq: []int{64}, lk: []int{64}, heads: 4, kvHeads: 1, hd: 256, causal: true},
	{lq: []int{1, 17, 150}, lk: []int{1, 17, 150}, heads: 4, kvHeads: 2, hd: 256, causal: true},
	{lq: []int{3, 70}, lk: []int{40, 129}, heads: 2, kvHeads: 1, hd: 256},
	{lq: []int{257}, lk: []int{257}, heads: 2, kvHeads: 1, hd: 256},
}

func TestFlashAttention(t *testing.T) {
	cases := flashCases
	if os.Getenv("KERN_BIG") != "" {
		cases = append(cases, attnCase{lq: []int{1000}, lk: []int{1000}, heads: 2, kvHeads: 1, hd: 128, causal: true})
	}
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		for i, c := range cases {
			if dev.Kind() == "native" && sum(c.lq)*c.heads > 600 {
				continue // native mode runs a goroutine per thread; the emulator covers the big shapes
			}
			t.Run(c.String(), func(t *testing.T) {
				t.Run("f16", func(t *testing.T) { runAttn[gpu.Half](t, dev, c, uint64(i)) })
				t.Run("bf16", func(t *testing.T) { runAttn[gpu.BFloat16](t, dev, c, uint64(i)) })
			})
		}
	})
}

// TestFlashAttentionBankConflicts profiles prefill at every head dim on
// the emulator: the padded shared rows must give 0 bank conflicts on the
// cp.async stores and the ldmatrix loads.
func TestFlashAttentionBankConflicts(t *testing.T) {
	for _, hd := range []int{64, 128, 256} {
		_, conflicts := profiled(t, func(dev *kern.Device) error {
			c := attnCase{lq: []int{70, 5}, lk: []int{70, 130}, heads: 2, kvHeads: 1, hd: hd, causal: true}
			rng := rand.New(rand.NewPCG(1, 2))
			q, _ := upload[gpu.Half](t, dev, randn(rng, sum(c.lq)*c.heads*hd, 1))
			k, _ := upload[gpu.Half](t, dev, randn(rng, sum(c.lk)*c.kvHeads*hd, 1))
			v, _ := upload[gpu.Half](t, dev, randn(rng, sum(c.lk)*c.kvHeads*hd, 1))
			out := alloc[gpu.Half](t, dev, sum(c.lq)*c.heads*hd)
			cuQ, _ := kern.Upload(dev, SeqOffsets(c.lq...))
			cuK, _ := kern.Upload(dev, SeqOffsets(c.lk...))
			return FlashAttention(dev, out, q, k, v, nil, cuQ, cuK, Attention{Heads: 2, KVHeads: 1, HeadDim: hd, Causal: true, MaxSeqQ: 70})
		})
		t.Logf("headDim %d: %d bank conflicts", hd, conflicts)
		if conflicts != 0 {
			t.Errorf("headDim %d: %d shared-memory bank conflicts, want 0", hd, conflicts)
		}
	}
}

func TestFlashAttentionErrors(t *testing.T) {
	dev := kern.OpenEmulator()
	h := func(n int) *kern.Buffer[gpu.Half] { return alloc[gpu.Half](t, dev, n) }
	cu := func(xs ...int32) *kern.Buffer[int32] {
		b, err := kern.Upload(dev, xs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Free() })
		return b
	}
	a := Attention{Heads: 4, KVHeads: 2, HeadDim: 64, MaxSeqQ: 8}
	q, kv := h(8*4*64), h(8*2*64)
	wantErr(t, "head dim", FlashAttention(dev, h(8*4*64), q, kv, kv, nil, cu(0, 8), cu(0, 8), Attention{Heads: 4, KVHeads: 2, HeadDim: 96, MaxSeqQ: 8}), "HeadDim = 96")
	wantErr(t, "gqa", FlashAttention(dev, h(8*4*64), q, kv, kv, nil, cu(0, 8), cu(0, 8), Attention{Heads: 4, KVHeads: 3, HeadDim: 64, MaxSeqQ: 8}), "not a multiple of KVHeads")
	wantErr(t, "maxSeqQ 0", FlashAttention(dev, h(8*4*64), q, kv, kv, nil, cu(0, 8), cu(0, 8), Attention{Heads: 4, KVHeads: 2, HeadDim: 64}), "MaxSeqQ = 0 with 8 query tokens")
	wantErr(t, "scale", FlashAttention(dev, h(8*4*64), q, kv, kv, nil, cu(0, 8), cu(0, 8), Attention{Heads: 4, KVHeads: 2, HeadDim: 64, MaxSeqQ: 8, Scale: -1}), "Scale = -1")
	wantErr(t, "out", FlashAttention(dev, h(7), q, kv, h(8*2*64), nil, cu(0, 8), cu(0, 8), a), "out has 7 elements")
	wantErr(t, "cu", FlashAttention(dev, h(8*4*64), q, kv, h(8*2*64), nil, cu(0, 8), cu(0, 4, 8), a), "cuSeqK has 3 offsets")
	wantErr(t, "lse", FlashAttention(dev, h(8*4*64), q, kv, h(8*2*64), alloc[float32](t, dev, 3), cu(0, 8), cu(0, 8), a), "lse has 3 elements")
	// Offsets past the tokens and a sequence longer than MaxSeqQ are
	// caught on the device.
	wantErr(t, "offsets", FlashAttention(dev, h(8*4*64), q, kv, h(8*2*64), nil, cu(0, 9), cu(0, 8), a), "cuSeqQ or cuSeqK")
	a.MaxSeqQ = 8 // one block of 64 rows for a sequence of 70
	q70, kv70 := h(70*4*64), h(70*2*64)
	wantErr(t, "maxSeqQ", FlashAttention(dev, h(70*4*64), q70, kv70, h(70*2*64), nil, cu(0, 70), cu(0, 70), a), "longer than maxSeqQ")
}
