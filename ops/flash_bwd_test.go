package ops

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// bwdRef is FlashAttention-2's backward in float64 on the given inputs
// (the layout of attnRef): P from lse, delta from o. With o and lse the
// exact forward results it is the exact gradient; here they are the
// float64 forward's rounded to T and float32, as the op receives them.
// It also returns, per gradient element, the sum of the magnitudes of its
// terms (|dS| bounded by P·(|dP| + |delta|)), which float32 rounding
// errors are relative to.
func bwdRef(c attnCase, q, k, v, o, do, lse []float64, scale float64) (dq, dk, dv, mq, mk, mv []float64) {
	dq, mq = make([]float64, len(q)), make([]float64, len(q))
	dk, mk = make([]float64, len(k)), make([]float64, len(k))
	dv, mv = make([]float64, len(k)), make([]float64, len(k))
	totalQ := len(q) / (c.heads * c.hd)
	group := c.heads / c.kvHeads
	qs, ks := 0, 0
	for b := range c.lq {
		lq, lk := c.lq[b], c.lk[b]
		for h := range c.heads {
			kh := h / group
			for i := range lq {
				qr := ((qs+i)*c.heads + h) * c.hd
				delta := 0.0
				for d := range c.hd {
					delta += do[qr+d] * o[qr+d]
				}
				for j := range lk {
					if c.causal && j > i+lk-lq {
						continue
					}
					kr := ((ks+j)*c.kvHeads + kh) * c.hd
					s, dp := 0.0, 0.0
					for d := range c.hd {
						s += q[qr+d] * k[kr+d]
						dp += do[qr+d] * v[kr+d]
					}
					p := math.Exp(s*scale - lse[h*totalQ+qs+i])
					ds := p * (dp - delta)
					dsAbs := p * (math.Abs(dp) + math.Abs(delta))
					for d := range c.hd {
						dq[qr+d] += scale * ds * k[kr+d]
						mq[qr+d] += scale * dsAbs * math.Abs(k[kr+d])
						dk[kr+d] += scale * ds * q[qr+d]
						mk[kr+d] += scale * dsAbs * math.Abs(q[qr+d])
						dv[kr+d] += p * do[qr+d]
						mv[kr+d] += p * math.Abs(do[qr+d])
					}
				}
			}
		}
		qs += lq
		ks += lk
	}
	return
}

// normals returns n standard normal values times mag (no outliers: the
// backward's tolerance is relative to the terms' magnitudes, and scores
// of 100s would make P one-hot).
func normals(rng *rand.Rand, n int, mag float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = rng.NormFloat64() * mag
	}
	return xs
}

func runBwd[T Half16](t *testing.T, dev *kern.Device, c attnCase, seed uint64, v2 bool) {
	rng := rand.New(rand.NewPCG(seed, 11))
	totalQ, totalK := sum(c.lq), sum(c.lk)
	nq, nk := totalQ*c.heads*c.hd, totalK*c.kvHeads*c.hd
	q, qw := upload[T](t, dev, normals(rng, nq, 1))
	k, kw := upload[T](t, dev, normals(rng, nk, 1))
	v, vw := upload[T](t, dev, normals(rng, nk, 1))
	do, dow := upload[T](t, dev, normals(rng, nq, 1))
	a := Attention{Heads: c.heads, KVHeads: c.kvHeads, HeadDim: c.hd, Causal: c.causal}
	scale := float64(a.scale())
	oRef, lseRef, _, _ := attnRef(c, qw, kw, vw, scale)
	o, ow := upload[T](t, dev, oRef)
	lse32 := make([]float32, len(lseRef))
	lsew := make([]float64, len(lseRef))
	for i, x := range lseRef {
		lse32[i] = float32(x)
		lsew[i] = float64(lse32[i])
	}
	lse, err := kern.Upload(dev, lse32)
	if err != nil {
		t.Fatal(err)
	}
	defer lse.Free()
	cuQ, _ := kern.Upload(dev, SeqOffsets(c.lq...))
	cuK, _ := kern.Upload(dev, SeqOffsets(c.lk...))
	defer cuQ.Free()
	defer cuK.Free()
	g := AttentionGrads[T]{DQ: alloc[T](t, dev, nq), DK: alloc[T](t, dev, nk), DV: alloc[T](t, dev, nk), Delta: alloc[float32](t, dev, c.heads*totalQ)}
	if v2 {
		a.MaxSeqQ, a.MaxSeqK = maxOf(c.lq), maxOf(c.lk)
	}
	if err := flashBackward(dev, g, q, k, v, o, do, lse, cuQ, cuK, a, v2); err != nil {
		t.Fatal(err)
	}
	dq, dk, dv, mq, mk, mv := bwdRef(c, qw, kw, vw, ow, dow, lsew, scale)
	// float32 scores, exp2.approx, dot products and sums: a few 2^-20 of
	// the terms' magnitudes; then one rounding to T. v2 also rounds P and
	// dS to T before the second products: a unit of T per term, relative
	// to the terms' magnitudes (|dS| ≤ P·(|dP| + |delta|)), and that
	// again for float16's subnormal steps near 0 (the tolerance's abs).
	tl := tol{abs: tiny[T](), rel: unit[T](), srel: 0x1p-16}
	if v2 {
		tl.srel = 2 * unit[T]()
	}
	compare(t, "dQ", download(t, g.DQ), dq, tl, mq)
	compare(t, "dK", download(t, g.DK), dk, tl, mk)
	compare(t, "dV", download(t, g.DV), dv, tl, mv)
}

// bwdCases are shared by both versions; the tensor-core one (v2) takes
// head dims 64 and 128 only. Lengths 17, 40, 33, 70 and 100 end mid-tile
// (v2's tiles are 32 and 64 rows), 64 on a tile boundary; lq ≠ lk checks
// the bottom-right causal alignment, and an empty sequence the zero
// gradients. v1 runs the first bwdV1Cases (it is slow in native mode)
// and the head dims v2 does not take.
const bwdV1Cases = 4

var bwdCases = []attnCase{
	{lq: []int{17}, lk: []int{17}, heads: 2, kvHeads: 2, hd: 64},
	{lq: []int{17}, lk: []int{17}, heads: 4, kvHeads: 1, hd: 128, causal: true},
	{lq: []int{1, 40, 9}, lk: []int{1, 40, 30}, heads: 4, kvHeads: 2, hd: 64, causal: true},
	{lq: []int{33, 5}, lk: []int{20, 64}, heads: 2, kvHeads: 1, hd: 32},
	{lq: []int{64}, lk: []int{64}, heads: 2, kvHeads: 1, hd: 128},
	{lq: []int{100, 70}, lk: []int{100, 40}, heads: 8, kvHeads: 2, hd: 64, causal: true},
	{lq: []int{70, 0, 3}, lk: []int{129, 5, 0}, heads: 2, kvHeads: 1, hd: 128, causal: true},
	{lq: []int{130}, lk: []int{70}, heads: 2, kvHeads: 2, hd: 64},
	{lq: []int{33}, lk: []int{33}, heads: 8, kvHeads: 1, hd: 128, causal: true},
	{lq: []int{17, 5}, lk: []int{17, 9}, heads: 2, kvHeads: 1, hd: 256, causal: true},
}

func TestFlashAttentionBackward(t *testing.T) {
	cases := bwdCases
	if os.Getenv("KERN_BIG") != "" {
		cases = append(cases, attnCase{lq: []int{1000}, lk: []int{1000}, heads: 2, kvHeads: 1, hd: 128, causal: true})
	}
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		for i, c := range cases {
			if dev.Kind() == "native" && sum(c.lq)*c.heads > 600 {
				continue // native mode runs a goroutine per thread; the emulator covers the big shapes
			}
			t.Run(c.String(), func(t *testing.T) {
				for _, v2 := range []bool{false, true} {
					v2ok := c.hd == 64 || c.hd == 128
					if v2 && !v2ok || !v2 && v2ok && i >= bwdV1Cases {
						continue
					}
					ver := "v1"
					if v2 {
						ver = "v2"
					}
					t.Run(ver+"/f16", func(t *testing.T) { runBwd[gpu.Half](t, dev, c, uint64(i), v2) })
					t.Run(ver+"/bf16", func(t *testing.T) { runBwd[gpu.BFloat16](t, dev, c, uint64(i), v2) })
				}
			})
		}
	})
}

// TestFlashAttentionBackwardBankConflicts profiles v2 at both head dims
// on the emulator: its shared rows are padded as the forward pass's are,
// so the cp.async stores and the ldmatrix loads (plain and .trans) must
// give 0 bank conflicts.
func TestFlashAttentionBackwardBankConflicts(t *testing.T) {
	for _, hd := range []int{64, 128} {
		_, conflicts := profiled(t, func(dev *kern.Device) error {
			c := attnCase{lq: []int{70, 5}, lk: []int{70, 130}, heads: 2, kvHeads: 1, hd: hd, causal: true}
			rng := rand.New(rand.NewPCG(1, 2))
			nq, nk := sum(c.lq)*c.heads*hd, sum(c.lk)*c.kvHeads*hd
			q, _ := upload[gpu.Half](t, dev, normals(rng, nq, 1))
			k, _ := upload[gpu.Half](t, dev, normals(rng, nk, 1))
			v, _ := upload[gpu.Half](t, dev, normals(rng, nk, 1))
			do, _ := upload[gpu.Half](t, dev, normals(rng, nq, 1))
			a := Attention{Heads: 2, KVHeads: 1, HeadDim: hd, Causal: true, MaxSeqQ: 70, MaxSeqK: 130}
			out, lse := alloc[gpu.Half](t, dev, nq), alloc[float32](t, dev, c.heads*sum(c.lq))
			cuQ, cuK := uploadT(t, dev, SeqOffsets(c.lq...)), uploadT(t, dev, SeqOffsets(c.lk...))
			if err := FlashAttention(dev, out, q, k, v, lse, cuQ, cuK, a); err != nil {
				return err
			}
			g := AttentionGrads[gpu.Half]{DQ: alloc[gpu.Half](t, dev, nq), DK: alloc[gpu.Half](t, dev, nk), DV: alloc[gpu.Half](t, dev, nk), Delta: alloc[float32](t, dev, c.heads*sum(c.lq))}
			return FlashAttentionBackward(dev, g, q, k, v, out, do, lse, cuQ, cuK, a)
		})
		t.Logf("headDim %d: %d bank conflicts", hd, conflicts)
		if conflicts != 0 {
			t.Errorf("headDim %d: %d shared-memory bank conflicts, want 0", hd, conflicts)
		}
	}
}

// TestFlashAttentionBackwardLimits checks v2's grid bounds: a sequence
// longer than MaxSeqQ or MaxSeqK is a device error, not a silent
// partial gradient.
func TestFlashAttentionBackwardLimits(t *testing.T) {
	dev := kern.OpenEmulator()
	const hd = 64
	nq, nk := 70*2*hd, 70*hd
	g := AttentionGrads[gpu.Half]{DQ: alloc[gpu.Half](t, dev, nq), DK: alloc[gpu.Half](t, dev, nk), DV: alloc[gpu.Half](t, dev, nk), Delta: alloc[float32](t, dev, 2*70)}
	q, k, lse := alloc[gpu.Half](t, dev, nq), alloc[gpu.Half](t, dev, nk), alloc[float32](t, dev, 2*70)
	cu := uploadT(t, dev, SeqOffsets(70))
	a := Attention{Heads: 2, KVHeads: 1, HeadDim: hd, MaxSeqQ: 70, MaxSeqK: 64}
	wantErr(t, "MaxSeqK", FlashAttentionBackward(dev, g, q, k, k, q, q, lse, cu, cu, a), "longer than MaxSeqK")
	a.MaxSeqQ, a.MaxSeqK = 64, 70
	wantErr(t, "MaxSeqQ", FlashAttentionBackward(dev, g, q, k, k, q, q, lse, cu, cu, a), "longer than MaxSeqQ")
	a.MaxSeqQ = -1
	wantErr(t, "negative", FlashAttentionBackward(dev, g, q, k, k, q, q, lse, cu, cu, a), "MaxSeqQ")
	wantErr(t, "head dim", FlashAttentionBackward(dev, g, q, k, k, q, q, lse, cu, cu, Attention{Heads: 2, KVHeads: 1, HeadDim: 80}), "HeadDim = 80, want a multiple of 32 up to 256")
}
