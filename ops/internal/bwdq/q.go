package bwdq

// The dQ kernel: a block per (64 queries, head, sequence).

import (
	"math"

	"github.com/gokern/kern/gpu"
)

//kern:kernel block=128 nobounds
func QF16D64(t gpu.Thread, dq, q, k, v, do []gpu.Half, lse, delta []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2, scale float32, causal bool) {
	qGrad(f16m{}, t, dq, q, k, v, do, lse, delta, cuQ, cuK, heads, kvHeads, scaleLog2, scale, causal, 64)
}

//kern:kernel block=128 nobounds
func QF16D128(t gpu.Thread, dq, q, k, v, do []gpu.Half, lse, delta []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2, scale float32, causal bool) {
	qGrad(f16m{}, t, dq, q, k, v, do, lse, delta, cuQ, cuK, heads, kvHeads, scaleLog2, scale, causal, 128)
}

//kern:kernel block=128 nobounds
func QBF16D64(t gpu.Thread, dq, q, k, v, do []gpu.BFloat16, lse, delta []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2, scale float32, causal bool) {
	qGrad(bf16m{}, t, dq, q, k, v, do, lse, delta, cuQ, cuK, heads, kvHeads, scaleLog2, scale, causal, 64)
}

//kern:kernel block=128 nobounds
func QBF16D128(t gpu.Thread, dq, q, k, v, do []gpu.BFloat16, lse, delta []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2, scale float32, causal bool) {
	qGrad(bf16m{}, t, dq, q, k, v, do, lse, delta, cuQ, cuK, heads, kvHeads, scaleLog2, scale, causal, 128)
}

// qGrad is the Q kernel body (hd, 64 or 128, a constant at every call).
// Shared memory: Q rows 0..63 at 0, dO at 64·ld, then two K and two V
// buffers of 32 rows. Per key tile (32 keys), warp w (queries 16w.. of
// the block; lane rows g and g+8, columns = keys 8·nt + 2·tig, +1):
//
//	S  = Q·Kᵀ       16×32, A = Q rows (ldmatrix), B = K rows (ldmatrix)
//	dP = dO·Vᵀ      the same with dO and V
//	P  = 2^(S·scale·log2 e - lse·log2 e), 0 where masked
//	dS = P∘(dP - delta)
//	dQ += dS·K      A = dS packed from the C fragments, B = K rows (ldmatrix.trans)
//
// Keys past the sequence are zero-filled and masked; query rows past it
// get lse = +Inf (P = 0) and are not stored.
func qGrad[T gpu.Elem, C mmaCodec[T]](c C, t gpu.Thread, dq, q, k, v, do []T, lse, delta []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2, scale float32, causal bool, hd int) {
	b, h, mb := t.BlockIdx().Z, t.BlockIdx().Y, t.BlockIdx().X
	qs, qe := int(cuQ[b]), int(cuQ[b+1])
	ks, ke := int(cuK[b]), int(cuK[b+1])
	totalQ, totalK := len(q)/(heads*hd), len(k)/(kvHeads*hd)
	if qs < 0 || qe < qs || qe > totalQ || ks < 0 || ke < ks || ke > totalK {
		panic("ops.FlashAttentionBackward: cuSeqQ or cuSeqK is not an ordered list of offsets within the tokens")
	}
	lq, lk := qe-qs, ke-ks
	if lq > t.GridDim().X*QQueries {
		panic("ops.FlashAttentionBackward: a query sequence is longer than MaxSeqQ")
	}
	if mb*QQueries >= lq {
		return
	}
	kvh := udiv(h, udiv(heads, kvHeads))
	ld := hd + Pad
	sm := gpu.DynShared[T](t)
	tid, lane, w := t.ThreadIdx().X, t.Lane(), t.Warp()
	g, tig := lane>>2, lane&3
	row0 := mb*QQueries + w*16 + g // this lane's first query row in the sequence

	// Keys this block needs: all lk, or, causal, up to its last row's
	// diagonal (bottom-right aligned).
	kend := lk
	if causal {
		kend = min(lk, (mb+1)*QQueries+lk-lq)
	}
	ntiles := 0
	if kend > 0 {
		ntiles = (kend + QKeys - 1) >> 5 // QKeys = 32
	}

	qStride, kStride := heads*hd, kvHeads*hd
	kBuf := 2 * QQueries * ld // K buffer i at kBuf + i·32·ld, V buffer i at kBuf + (2+i)·32·ld
	qoff := (qs+mb*QQueries)*qStride + h*hd
	load(t, sm, 0, q, qoff, qStride, lq-mb*QQueries, QQueries, hd, tid)
	load(t, sm, QQueries*ld, do, qoff, qStride, lq-mb*QQueries, QQueries, hd, tid)
	gpu.CpAsyncCommit(t)
	if ntiles > 0 {
		load(t, sm, kBuf, k, ks*kStride+kvh*hd, kStride, lk, QKeys, hd, tid)
		load(t, sm, kBuf+2*QKeys*ld, v, ks*kStride+kvh*hd, kStride, lk, QKeys, hd, tid)
	}
	gpu.CpAsyncCommit(t)

	// lse·log2 e and delta of rows g and g+8 (+Inf and 0 past the end).
	var l2, dl [2]float32
	//kern:unroll
	for r := 0; r < 2; r++ {
		l2[r], dl[r] = posInf(), 0
		if i := row0 + 8*r; i < lq {
			l2[r], dl[r] = lse[h*totalQ+qs+i]*math.Log2E, delta[h*totalQ+qs+i]
		}
	}

	aOff, bOff, tOff := offsets(lane, ld)
	qA := w*16*ld + aOff
	oA := QQueries*ld + qA
	// Q's and dO's A fragments, loaded once into registers (hd/2 of
	// them; 230 registers in all at head dim 128, no spill) once their
	// group, the first committed, is complete.
	gpu.CpAsyncWait(t, 1)
	t.Sync()
	var qf, of [8][4]uint32
	//kern:unroll
	for kk := 0; kk < 8; kk++ {
		if kk < hd/16 {
			qf[kk] = gpu.LdMatrixX4(t, &sm[qA+16*kk])
			of[kk] = gpu.LdMatrixX4(t, &sm[oA+16*kk])
		}
	}
	var dqa [16][4]float32
	for j := 0; j < ntiles; j++ {
		if j+1 < ntiles {
			nb := kBuf + ((j+1)&1)*QKeys*ld
			off := (ks+(j+1)*QKeys)*kStride + kvh*hd
			load(t, sm, nb, k, off, kStride, lk-(j+1)*QKeys, QKeys, hd, tid)
			load(t, sm, nb+2*QKeys*ld, v, off, kStride, lk-(j+1)*QKeys, QKeys, hd, tid)
		}
		gpu.CpAsyncCommit(t)
		gpu.CpAsyncWait(t, 1) // tile j's group (and Q's) is complete
		t.Sync()
		kb := kBuf + (j&1)*QKeys*ld
		vb := kb + 2*QKeys*ld

		// S and dP: hd/16 k-steps, 4 n-tiles of 8 keys.
		var s, dp [4][4]float32
		//kern:unroll
		for kk := 0; kk < 8; kk++ {
			if kk < hd/16 {
				qa, oa := qf[kk], of[kk]
				//kern:unroll
				for np := 0; np < 2; np++ {
					r := gpu.LdMatrixX4(t, &sm[kb+bOff+16*np*ld+16*kk])
					s[2*np] = c.mma(t, qa, [2]uint32{r[0], r[1]}, s[2*np])
					s[2*np+1] = c.mma(t, qa, [2]uint32{r[2], r[3]}, s[2*np+1])
					r = gpu.LdMatrixX4(t, &sm[vb+bOff+16*np*ld+16*kk])
					dp[2*np] = c.mma(t, oa, [2]uint32{r[0], r[1]}, dp[2*np])
					dp[2*np+1] = c.mma(t, oa, [2]uint32{r[2], r[3]}, dp[2*np+1])
				}
			}
		}

		// P and dS, masked only in tiles that reach the sequence's end or
		// the diagonal: element (row r, n-tile nt, e) is key k0 + 2·tig +
		// 8·nt + e, masked when 8·nt + e reaches lim[r]. Outside those
		// tiles lim is above every such offset, so the masking is
		// selects, with no branch per element.
		k0 := j * QKeys
		lim := [2]int32{1 << 30, 1 << 30}
		if k0+QKeys > lk || causal && k0+QKeys-1 > mb*QQueries+lk-lq {
			//kern:unroll
			for r := 0; r < 2; r++ {
				lr := lk
				if causal {
					lr = min(lk, row0+8*r+lk-lq+1)
				}
				lim[r] = int32(lr - k0 - 2*tig)
			}
		}
		var dsa [2][4]uint32
		//kern:unroll
		for nt := 0; nt < 4; nt++ {
			//kern:unroll
			for r := 0; r < 2; r++ {
				p0 := gpu.Exp2(gpu.FMA(s[nt][2*r], scaleLog2, -l2[r]))
				p1 := gpu.Exp2(gpu.FMA(s[nt][2*r+1], scaleLog2, -l2[r]))
				if int32(8*nt) >= lim[r] {
					p0 = 0
				}
				if int32(8*nt+1) >= lim[r] {
					p1 = 0
				}
				dsa[nt/2][r+2*(nt%2)] = c.pack(p0*(dp[nt][2*r]-dl[r]), p1*(dp[nt][2*r+1]-dl[r]))
			}
		}

		// dQ += dS·K: 2 k-steps of 16 keys, hd/8 n-tiles of 8 dims.
		//kern:unroll
		for kk := 0; kk < 2; kk++ {
			//kern:unroll
			for dt := 0; dt < 8; dt++ {
				if dt < hd/16 {
					r := gpu.LdMatrixX4Trans(t, &sm[kb+tOff+16*kk*ld+16*dt])
					dqa[2*dt] = c.mma(t, dsa[kk], [2]uint32{r[0], r[1]}, dqa[2*dt])
					dqa[2*dt+1] = c.mma(t, dsa[kk], [2]uint32{r[2], r[3]}, dqa[2*dt+1])
				}
			}
		}
		t.Sync() // every warp is done with this buffer before it is refilled
	}

	//kern:unroll
	for r := 0; r < 2; r++ {
		if i := row0 + 8*r; i < lq {
			base := (qs+i)*qStride + h*hd + 2*tig
			//kern:unroll
			for dt := 0; dt < 16; dt++ {
				if dt < hd/8 { // a 32-bit store per pair (base is even)
					gpu.Store2(dq, base+8*dt, [2]T{c.store(dqa[dt][2*r] * scale), c.store(dqa[dt][2*r+1] * scale)})
				}
			}
		}
	}
}
