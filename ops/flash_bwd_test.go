package ops

import (
	"math"
	"math/rand/v2"
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

func runBwd[T Half16](t *testing.T, dev *kern.Device, c attnCase, seed uint64) {
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
	if err := FlashAttentionBackward(dev, g, q, k, v, o, do, lse, cuQ, cuK, a); err != nil {
		t.Fatal(err)
	}
	dq, dk, dv, mq, mk, mv := bwdRef(c, qw, kw, vw, ow, dow, lsew, scale)
	// float32 scores, exp2.approx, dot products and sums: a few 2^-20 of
	// the terms' magnitudes; then one rounding to T.
	tl := tol{abs: tiny[T](), rel: unit[T](), srel: 0x1p-16}
	compare(t, "dQ", download(t, g.DQ), dq, tl, mq)
	compare(t, "dK", download(t, g.DK), dk, tl, mk)
	compare(t, "dV", download(t, g.DV), dv, tl, mv)
}

func TestFlashAttentionBackward(t *testing.T) {
	cases := []attnCase{
		{lq: []int{17}, lk: []int{17}, heads: 2, kvHeads: 2, hd: 64},
		{lq: []int{17}, lk: []int{17}, heads: 4, kvHeads: 1, hd: 128, causal: true},
		{lq: []int{1, 40, 9}, lk: []int{1, 40, 30}, heads: 4, kvHeads: 2, hd: 64, causal: true},
		{lq: []int{33, 5}, lk: []int{20, 64}, heads: 2, kvHeads: 1, hd: 32},
	}
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		for i, c := range cases {
			t.Run(c.String(), func(t *testing.T) {
				t.Run("f16", func(t *testing.T) { runBwd[gpu.Half](t, dev, c, uint64(i)) })
				t.Run("bf16", func(t *testing.T) { runBwd[gpu.BFloat16](t, dev, c, uint64(i)) })
			})
		}
	})
}
