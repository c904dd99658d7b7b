package bwdkv

// The dK/dV kernel: a block per (64 keys, KV head, sequence).

import (
	"math"

	"github.com/gokern/kern/gpu"
)

//kern:kernel block=128 nobounds
func KVF16D64(t gpu.Thread, dk, dv, q, k, v, do []gpu.Half, lse, delta []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2, scale float32, causal bool) {
	kvGrad(f16m{}, t, dk, dv, q, k, v, do, lse, delta, cuQ, cuK, heads, kvHeads, scaleLog2, scale, causal, 64)
}

//kern:kernel block=128 nobounds
func KVF16D128(t gpu.Thread, dk, dv, q, k, v, do []gpu.Half, lse, delta []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2, scale float32, causal bool) {
	kvGrad(f16m{}, t, dk, dv, q, k, v, do, lse, delta, cuQ, cuK, heads, kvHeads, scaleLog2, scale, causal, 128)
}

//kern:kernel block=128 nobounds
func KVBF16D64(t gpu.Thread, dk, dv, q, k, v, do []gpu.BFloat16, lse, delta []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2, scale float32, causal bool) {
	kvGrad(bf16m{}, t, dk, dv, q, k, v, do, lse, delta, cuQ, cuK, heads, kvHeads, scaleLog2, scale, causal, 64)
}

//kern:kernel block=128 nobounds
func KVBF16D128(t gpu.Thread, dk, dv, q, k, v, do []gpu.BFloat16, lse, delta []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2, scale float32, causal bool) {
	kvGrad(bf16m{}, t, dk, dv, q, k, v, do, lse, delta, cuQ, cuK, heads, kvHeads, scaleLog2, scale, causal, 128)
}

// kvGrad is the KV kernel body (hd, 64 or 128, is a constant at every
// call). Shared memory: K rows 0..63 at 0, V at 64·ld, then two Q and two
// dO buffers of 32 rows; lse·log2 e and delta of each Q buffer's rows in
// static shared arrays.
//
// Per query tile (32 queries of head h), warp w (keys 16w.. of the block;
// lane rows g and g+8, columns = queries 8·nt + 2·tig, +1):
//
//	Sᵀ  = K·Qᵀ      16×32, A = K rows (ldmatrix), B = Q rows (ldmatrix)
//	dPᵀ = V·dOᵀ     the same with V and dO
//	Pᵀ  = 2^(Sᵀ·scale·log2 e - lse·log2 e), 0 where masked
//	dSᵀ = Pᵀ∘(dPᵀ - delta)
//	dV += Pᵀ·dO     A = Pᵀ packed from the C fragments, B = dO rows (ldmatrix.trans)
//	dK += dSᵀ·Q     the same with dSᵀ and Q
//
// Query rows past the sequence are zero-filled with lse = +Inf, so their
// P is exactly 0 with no mask. Key rows past the sequence are
// zero-filled too; what they compute stays in their own rows of dK and
// dV (a row of A only reaches the same row of D), which are not stored.
func kvGrad[T gpu.Elem, C mmaCodec[T]](c C, t gpu.Thread, dk, dv, q, k, v, do []T, lse, delta []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2, scale float32, causal bool, hd int) {
	b, kvh, nb := t.BlockIdx().Z, t.BlockIdx().Y, t.BlockIdx().X
	qs, qe := int(cuQ[b]), int(cuQ[b+1])
	ks, ke := int(cuK[b]), int(cuK[b+1])
	totalQ, totalK := len(q)/(heads*hd), len(k)/(kvHeads*hd)
	if qs < 0 || qe < qs || qe > totalQ || ks < 0 || ke < ks || ke > totalK {
		panic("ops.FlashAttentionBackward: cuSeqQ or cuSeqK is not an ordered list of offsets within the tokens")
	}
	lq, lk := qe-qs, ke-ks
	if lk > t.GridDim().X*KVKeys {
		panic("ops.FlashAttentionBackward: a key sequence is longer than MaxSeqK")
	}
	kb0 := nb * KVKeys
	if kb0 >= lk {
		return
	}
	group := udiv(heads, kvHeads)
	ld := hd + Pad
	sm := gpu.DynShared[T](t)
	lsS := gpu.Shared[float32](t, 2*KVQueries)
	dlS := gpu.Shared[float32](t, 2*KVQueries)
	tid, lane, w := t.ThreadIdx().X, t.Lane(), t.Warp()
	g, tig := lane>>2, lane&3

	// Query tiles of each head: causal, from the one holding the first
	// query that sees key kb0 (bottom-right aligned: i ≥ j - (lk - lq)).
	qt0 := 0
	if causal {
		qt0 = max(0, kb0-(lk-lq)) >> 5 // KVQueries = 32
	}
	nqt := (lq + KVQueries - 1) >> 5
	iters := group * max(0, nqt-qt0)

	kStride, qStride := kvHeads*hd, heads*hd
	qBuf := 2 * KVKeys * ld // Q buffer i at qBuf + i·32·ld, dO buffer i at qBuf + (2+i)·32·ld
	load(t, sm, 0, k, (ks+kb0)*kStride+kvh*hd, kStride, lk-kb0, KVKeys, hd, tid)
	load(t, sm, KVKeys*ld, v, (ks+kb0)*kStride+kvh*hd, kStride, lk-kb0, KVKeys, hd, tid)
	gpu.CpAsyncCommit(t) // K and V: a group of their own, so their fragments can be read first
	h, qt := kvh*group, qt0
	if iters > 0 {
		prefetch(t, sm, lsS, dlS, q, do, lse, delta, 0, qBuf, h, qt*KVQueries, qs, lq, qStride, totalQ, hd, tid)
	}
	gpu.CpAsyncCommit(t)

	aOff, bOff, tOff := offsets(lane, ld)
	kA := w*16*ld + aOff
	vA := KVKeys*ld + kA
	jrow := kb0 + w*16 + g // this lane's first key row in the sequence

	// At head dim 64 the warp's K and V A fragments stay in registers
	// (32 of them; 161 in all on sm_80). At 128 they would take 64 more than the
	// 244 the kernel already needs, so they are re-read each tile.
	gpu.CpAsyncWait(t, 1) // K and V are in
	t.Sync()
	var kf, vf [4][4]uint32
	if hd == 64 {
		//kern:unroll
		for kk := 0; kk < 4; kk++ {
			kf[kk] = gpu.LdMatrixX4(t, &sm[kA+16*kk])
			vf[kk] = gpu.LdMatrixX4(t, &sm[vA+16*kk])
		}
	}
	var dka, dva [16][4]float32
	for it := 0; it < iters; it++ {
		hn, qtn := h, qt+1
		if qtn == nqt {
			hn, qtn = h+1, qt0
		}
		if it+1 < iters {
			prefetch(t, sm, lsS, dlS, q, do, lse, delta, (it+1)&1, qBuf, hn, qtn*KVQueries, qs, lq, qStride, totalQ, hd, tid)
		}
		gpu.CpAsyncCommit(t)
		gpu.CpAsyncWait(t, 1) // this tile's group is complete
		t.Sync()
		bi := it & 1
		qb := qBuf + bi*KVQueries*ld
		ob := qBuf + (2+bi)*KVQueries*ld

		// Sᵀ and dPᵀ: hd/16 k-steps, 4 n-tiles of 8 queries.
		var st, dpt [4][4]float32
		//kern:unroll
		for kk := 0; kk < 8; kk++ {
			if kk < hd/16 {
				var ka, va [4]uint32
				if hd == 64 {
					ka, va = kf[kk], vf[kk]
				} else {
					ka = gpu.LdMatrixX4(t, &sm[kA+16*kk])
					va = gpu.LdMatrixX4(t, &sm[vA+16*kk])
				}
				//kern:unroll
				for np := 0; np < 2; np++ {
					r := gpu.LdMatrixX4(t, &sm[qb+bOff+16*np*ld+16*kk])
					st[2*np] = c.mma(t, ka, [2]uint32{r[0], r[1]}, st[2*np])
					st[2*np+1] = c.mma(t, ka, [2]uint32{r[2], r[3]}, st[2*np+1])
					r = gpu.LdMatrixX4(t, &sm[ob+bOff+16*np*ld+16*kk])
					dpt[2*np] = c.mma(t, va, [2]uint32{r[0], r[1]}, dpt[2*np])
					dpt[2*np+1] = c.mma(t, va, [2]uint32{r[2], r[3]}, dpt[2*np+1])
				}
			}
		}

		// Pᵀ and dSᵀ, packed as the A fragments of the next products
		// (k-step nt/2: a[r] from n-tile 2kk, a[2+r] from 2kk+1). Causal
		// masking only where the tile crosses the diagonal: element (key
		// j, query i) is masked when j - i > lk - lq.
		// With lim = j0 - q0 - 2·tig - (lk - lq) for the lane's key j0 =
		// jrow, element (r, nt, e) is masked when 8·nt + e - 8·r < lim;
		// outside the diagonal tiles lim is below every such constant, so
		// the masking is selects, with no branch per element.
		q0 := qt * KVQueries
		lim := int32(-1 << 30)
		if causal && q0 < kb0+KVKeys-1-(lk-lq) {
			lim = int32(jrow - q0 - 2*tig - (lk - lq))
		}
		var pa, dsa [2][4]uint32
		//kern:unroll
		for nt := 0; nt < 4; nt++ {
			col := 8*nt + 2*tig
			l0, l1 := lsS[bi*KVQueries+col], lsS[bi*KVQueries+col+1]
			d0, d1 := dlS[bi*KVQueries+col], dlS[bi*KVQueries+col+1]
			//kern:unroll
			for r := 0; r < 2; r++ {
				p0 := gpu.Exp2(gpu.FMA(st[nt][2*r], scaleLog2, -l0))
				p1 := gpu.Exp2(gpu.FMA(st[nt][2*r+1], scaleLog2, -l1))
				if int32(8*nt-8*r) < lim {
					p0 = 0
				}
				if int32(8*nt+1-8*r) < lim {
					p1 = 0
				}
				pa[nt/2][r+2*(nt%2)] = c.pack(p0, p1)
				dsa[nt/2][r+2*(nt%2)] = c.pack(p0*(dpt[nt][2*r]-d0), p1*(dpt[nt][2*r+1]-d1))
			}
		}

		// dV += Pᵀ·dO, dK += dSᵀ·Q: 2 k-steps of 16 queries, hd/8
		// n-tiles of 8 dims.
		//kern:unroll
		for kk := 0; kk < 2; kk++ {
			//kern:unroll
			for dp := 0; dp < 8; dp++ {
				if dp < hd/16 {
					r := gpu.LdMatrixX4Trans(t, &sm[ob+tOff+16*kk*ld+16*dp])
					dva[2*dp] = c.mma(t, pa[kk], [2]uint32{r[0], r[1]}, dva[2*dp])
					dva[2*dp+1] = c.mma(t, pa[kk], [2]uint32{r[2], r[3]}, dva[2*dp+1])
					r = gpu.LdMatrixX4Trans(t, &sm[qb+tOff+16*kk*ld+16*dp])
					dka[2*dp] = c.mma(t, dsa[kk], [2]uint32{r[0], r[1]}, dka[2*dp])
					dka[2*dp+1] = c.mma(t, dsa[kk], [2]uint32{r[2], r[3]}, dka[2*dp+1])
				}
			}
		}
		t.Sync() // every warp is done with these buffers before they are refilled
		h, qt = hn, qtn
	}

	//kern:unroll
	for r := 0; r < 2; r++ {
		if j := jrow + 8*r; j < lk {
			base := (ks+j)*kStride + kvh*hd + 2*tig
			//kern:unroll
			for dt := 0; dt < 16; dt++ {
				if dt < hd/8 { // a 32-bit store per pair (base is even)
					gpu.Store2(dk, base+8*dt, [2]T{c.store(dka[dt][2*r] * scale), c.store(dka[dt][2*r+1] * scale)})
					gpu.Store2(dv, base+8*dt, [2]T{c.store(dva[dt][2*r]), c.store(dva[dt][2*r+1])})
				}
			}
		}
	}
}

// prefetch starts the copies of the Q and dO rows q0.. of head h into
// buffer bi and stores their lse·log2 e and delta (+Inf and 0 past the
// sequence, so those rows get P = 0). The shared stores are plain: the
// loop's next barrier publishes them with the cp.async data.
func prefetch[T gpu.Elem](t gpu.Thread, sm []T, lsS, dlS []float32, q, do []T, lse, delta []float32, bi, qBuf, h, q0, qs, lq, qStride, totalQ, hd, tid int) {
	ld := hd + Pad
	off := (qs+q0)*qStride + h*hd
	load(t, sm, qBuf+bi*KVQueries*ld, q, off, qStride, lq-q0, KVQueries, hd, tid)
	load(t, sm, qBuf+(2+bi)*KVQueries*ld, do, off, qStride, lq-q0, KVQueries, hd, tid)
	if tid < 2*KVQueries {
		i := q0 + tid&(KVQueries-1)
		li := h*totalQ + qs + i
		if tid < KVQueries {
			x := posInf()
			if i < lq {
				x = lse[li] * math.Log2E
			}
			lsS[bi*KVQueries+tid] = x
		} else {
			x := float32(0)
			if i < lq {
				x = delta[li]
			}
			dlS[bi*KVQueries+tid-KVQueries] = x
		}
	}
}
