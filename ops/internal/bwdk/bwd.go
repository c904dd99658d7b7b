// Package bwdk holds the attention backward kernels behind
// ops.FlashAttentionBackward (ops/flash_bwd.go describes the math and the
// layouts). Use them through package ops, which checks the shapes.
package bwdk

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// The kernels are launched with blocks of 128 threads (4 warps) but
// declare no block= size: given .maxntid 128, ptxas 13.5 chose 56
// registers for KV on sm_90 and spilled 4 bytes; without it, it fits KV
// in 61 with no spill.
//
// A warp owns one row (a query or a key of one head); lane l holds dims
// l, l+32, ..., so a head dim up to 32·maxDPL is held in registers.
const maxDPL = 8

// Delta computes delta[h, i] = Σ_d dO[i,h,d]·O[i,h,d], a warp per (token,
// head) pair.
//
//kern:kernel
func DeltaF16(t gpu.Thread, delta []float32, o, do []gpu.Half, tokens, heads, hd int) {
	deltaRows(f16c{}, t, delta, o, do, tokens, heads, hd)
}

//kern:kernel
func DeltaBF16(t gpu.Thread, delta []float32, o, do []gpu.BFloat16, tokens, heads, hd int) {
	deltaRows(bf16c{}, t, delta, o, do, tokens, heads, hd)
}

func deltaRows[T any, C codec[T]](c C, t gpu.Thread, delta []float32, o, do []T, tokens, heads, hd int) {
	w := t.BlockIdx().X*4 + t.Warp()
	if w >= tokens*heads {
		return
	}
	s := float32(0)
	for d := t.Lane(); d < hd; d += 32 {
		s = gpu.FMA(c.load(o[w*hd+d]), c.load(do[w*hd+d]), s)
	}
	s = gpu.WarpSum(t, s)
	if t.Lane() == 0 {
		delta[urem(w, heads)*tokens+udiv(w, heads)] = s
	}
}

// KV computes dK and dV, a warp per (key token, KV head): for every query
// head of the group and every query i that sees key j,
//
//	p = exp(s_ij - lse_i)   dp = dO_i·v_j   ds = p·(dp - delta_i)
//	dV_j += p·dO_i          dK_j += scale·ds·q_i
//
//kern:kernel
func KVF16(t gpu.Thread, dk, dv, q, k, v, do []gpu.Half, lse, delta []float32, cuQ, cuK []int32, totalQ, totalK, heads, kvHeads, hd int, scale float32, causal bool) {
	kvGrad(f16c{}, t, dk, dv, q, k, v, do, lse, delta, cuQ, cuK, totalQ, totalK, heads, kvHeads, hd, scale, causal)
}

//kern:kernel
func KVBF16(t gpu.Thread, dk, dv, q, k, v, do []gpu.BFloat16, lse, delta []float32, cuQ, cuK []int32, totalQ, totalK, heads, kvHeads, hd int, scale float32, causal bool) {
	kvGrad(bf16c{}, t, dk, dv, q, k, v, do, lse, delta, cuQ, cuK, totalQ, totalK, heads, kvHeads, hd, scale, causal)
}

func kvGrad[T any, C codec[T]](c C, t gpu.Thread, dk, dv, q, k, v, do []T, lse, delta []float32, cuQ, cuK []int32, totalQ, totalK, heads, kvHeads, hd int, scale float32, causal bool) {
	w := t.BlockIdx().X*4 + t.Warp()
	if w >= totalK*kvHeads {
		return
	}
	j, kvh := udiv(w, kvHeads), urem(w, kvHeads)
	b := 0
	for b+2 < len(cuK) && int(cuK[b+1]) <= j {
		b++
	}
	qs, lq := int(cuQ[b]), int(cuQ[b+1])-int(cuQ[b])
	ks, lk := int(cuK[b]), int(cuK[b+1])-int(cuK[b])
	jl := j - ks
	i0 := 0
	if causal {
		i0 = max(0, jl-(lk-lq))
	}
	group := udiv(heads, kvHeads)
	lane := t.Lane()
	var kj, vj, gk, gv [maxDPL]float32
	//kern:unroll
	for e := 0; e < maxDPL; e++ {
		if d := lane + 32*e; d < hd {
			kj[e], vj[e] = c.load(k[w*hd+d]), c.load(v[w*hd+d])
		}
	}
	for g := 0; g < group; g++ {
		h := kvh*group + g
		for i := i0; i < lq; i++ {
			row := ((qs+i)*heads + h) * hd
			var qi, doi [maxDPL]float32
			s, dp := float32(0), float32(0)
			//kern:unroll
			for e := 0; e < maxDPL; e++ {
				if d := lane + 32*e; d < hd {
					qi[e], doi[e] = c.load(q[row+d]), c.load(do[row+d])
					s = gpu.FMA(qi[e], kj[e], s)
					dp = gpu.FMA(doi[e], vj[e], dp)
				}
			}
			s, dp = gpu.WarpSum(t, s), gpu.WarpSum(t, dp)
			li := h*totalQ + qs + i
			p := gpu.Exp2((s*scale - lse[li]) * math.Log2E)
			ds := p * (dp - delta[li])
			//kern:unroll
			for e := 0; e < maxDPL; e++ {
				gv[e] = gpu.FMA(p, doi[e], gv[e])
				gk[e] = gpu.FMA(ds, qi[e], gk[e])
			}
		}
	}
	//kern:unroll
	for e := 0; e < maxDPL; e++ {
		if d := lane + 32*e; d < hd {
			dk[w*hd+d], dv[w*hd+d] = c.store(gk[e]*scale), c.store(gv[e])
		}
	}
}

// Q computes dQ, a warp per (query token, head): dQ_i = scale·Σ_j ds_ij·k_j
// over the keys query i sees, ds recomputed as in KV.
//
//kern:kernel
func QF16(t gpu.Thread, dq, q, k, v, do []gpu.Half, lse, delta []float32, cuQ, cuK []int32, totalQ, totalK, heads, kvHeads, hd int, scale float32, causal bool) {
	qGrad(f16c{}, t, dq, q, k, v, do, lse, delta, cuQ, cuK, totalQ, totalK, heads, kvHeads, hd, scale, causal)
}

//kern:kernel
func QBF16(t gpu.Thread, dq, q, k, v, do []gpu.BFloat16, lse, delta []float32, cuQ, cuK []int32, totalQ, totalK, heads, kvHeads, hd int, scale float32, causal bool) {
	qGrad(bf16c{}, t, dq, q, k, v, do, lse, delta, cuQ, cuK, totalQ, totalK, heads, kvHeads, hd, scale, causal)
}

func qGrad[T any, C codec[T]](c C, t gpu.Thread, dq, q, k, v, do []T, lse, delta []float32, cuQ, cuK []int32, totalQ, totalK, heads, kvHeads, hd int, scale float32, causal bool) {
	w := t.BlockIdx().X*4 + t.Warp()
	if w >= totalQ*heads {
		return
	}
	i, h := udiv(w, heads), urem(w, heads)
	b := 0
	for b+2 < len(cuQ) && int(cuQ[b+1]) <= i {
		b++
	}
	qs, lq := int(cuQ[b]), int(cuQ[b+1])-int(cuQ[b])
	ks, lk := int(cuK[b]), int(cuK[b+1])-int(cuK[b])
	il := i - qs
	jend := lk
	if causal {
		jend = max(0, min(lk, il+lk-lq+1))
	}
	kvh := udiv(h, udiv(heads, kvHeads))
	lane := t.Lane()
	var qi, doi, gq [maxDPL]float32
	//kern:unroll
	for e := 0; e < maxDPL; e++ {
		if d := lane + 32*e; d < hd {
			qi[e], doi[e] = c.load(q[w*hd+d]), c.load(do[w*hd+d])
		}
	}
	li := h*totalQ + i
	lsei, di := lse[li], delta[li]
	for j := 0; j < jend; j++ {
		row := ((ks+j)*kvHeads + kvh) * hd
		var kj [maxDPL]float32
		s, dp := float32(0), float32(0)
		//kern:unroll
		for e := 0; e < maxDPL; e++ {
			if d := lane + 32*e; d < hd {
				kj[e] = c.load(k[row+d])
				s = gpu.FMA(qi[e], kj[e], s)
				dp = gpu.FMA(doi[e], c.load(v[row+d]), dp)
			}
		}
		s, dp = gpu.WarpSum(t, s), gpu.WarpSum(t, dp)
		p := gpu.Exp2((s*scale - lsei) * math.Log2E)
		ds := p * (dp - di)
		//kern:unroll
		for e := 0; e < maxDPL; e++ {
			gq[e] = gpu.FMA(ds, kj[e], gq[e])
		}
	}
	//kern:unroll
	for e := 0; e < maxDPL; e++ {
		if d := lane + 32*e; d < hd {
			dq[w*hd+d] = c.store(gq[e] * scale)
		}
	}
}

// udiv and urem divide non-negative ints below 2^32 in 32 bits (a 64-bit
// division is a subroutine call in SASS, and ptxas spills around it).
func udiv(a, b int) int { return int(uint32(a) / uint32(b)) }
func urem(a, b int) int { return int(uint32(a) % uint32(b)) }

// A codec is a 16-bit element type's conversions to and from float32.
type codec[T any] interface {
	load(T) float32
	store(float32) T
}

type f16c struct{}

func (f16c) load(x gpu.Half) float32  { return x.Float32() }
func (f16c) store(v float32) gpu.Half { return gpu.ToHalf(v) }

type bf16c struct{}

func (bf16c) load(x gpu.BFloat16) float32  { return x.Float32() }
func (bf16c) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }
