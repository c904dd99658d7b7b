package attnhv2

// The kernel: one block owns FlashM = 128 queries of one head of one
// sequence (grid and masks as ops/flash.go describes for the sm_80
// kernels). Its 384 threads are two consumer warpgroups (warps 0-3 and
// 4-7, 64 queries each, 16 rows per warp as wgmma's D layout gives them)
// that share every K/V tile, and a producer warpgroup (warps 8-11) of
// which one warp works (one lane issuing TMA copies). The producer
// warpgroup gives its registers to the consumers (setmaxnreg, PTX ISA
// §9.7.17.1: producerRegs and consumerRegs). FlashAttention-3's structure with its
// intra-warpgroup overlap of Q·Kᵀ and softmax, without its ping-pong
// scheduling of the two warpgroups (later work).
//
// K/V tiles are FlashN = 128 keys (FlashAttention-3's kBlockN at head
// dim 128): S = Q·Kᵀ is one m64n128k16 wgmma per k-step, and the
// per-tile costs (the mbarrier waits and arrivals, the row maxima's
// shuffles, the O rescale, the wait for the tensor cores) are paid once
// per 128 keys instead of twice. Registers at head dim 128: S being
// computed (64 floats), S being used (64, turned into P as it goes) and O
// (64) per thread: more than the 168 a 384-thread block starts with, so
// the consumers take the producers' registers.
//
// Shared memory (dynamic, 1024-byte aligned on sm_90a): the Q tile (128
// rows), then Stages K tiles and Stages V tiles (128 rows each), every
// tile stored as headDim/64 chunks of its rows × 128 bytes with the
// 128-byte swizzle: the layout TMA boxes of 64×64 16-bit values with
// CU_TENSOR_MAP_SWIZZLE_128B write, one box after another (two boxes of
// rows per chunk); 160 KiB at head dim 128.
//
// As wgmma operands (PTX ISA §9.7.15.5.1, gpu/wgmma.go and
// gpu/wgmma_major.go): Q is A, K-major (a query row's dims contiguous;
// warpgroup cw starts 64 rows in), and K is B, K-major (B stored N×K =
// keys × dims): descriptor sbo 1024 (8 rows of 128 bytes), k-step kk at
// +32·(kk%4) bytes inside the swizzled row and one chunk on per 4 steps.
// V is B of P·V stored K×N = keys × dims with dims contiguous, MN-major:
// a 64-dim chunk is an 8-key × 128-byte atom every 1024 bytes (sbo),
// k-step kk (16 keys) at +2048 bytes, the second chunk (headDim 128) 8
// KiB on (lbo), so one m64n{headDim}k16 covers all dims.
//
// mbarriers (PTX ISA §9.7.13.15): bars[0] Q landed (1 arrival + the Q
// bytes); per stage s of the K ring and of the V ring, full (1 arrival by
// the producer with expect_tx + the tile's bytes) and empty (256
// arrivals, every consumer thread once its wgmmas that read the tile have
// retired). Tile j uses stage j%Stages of each ring in phase j/Stages:
// the consumers wait for parity (j/Stages)&1 of full, the producer,
// before refilling a stage for tile j ≥ Stages, for parity
// (j/Stages-1)&1 of empty. The consumers pipeline (see the loop): S_j =
// Q·K_jᵀ runs while tile j-1's softmax and P·V are done, and K_j and
// V_{j-1} are released when step j ends, so two stages of each give the
// producer one step to refill. emu's racecheck checks all of this
// hand-over (emu/race_mbarrier.go).
//
// Ragged tiles: TMA fills rows past the tensor's end with zeros, but
// rows past a sequence's end inside the batch are the next sequence's
// queries, keys and values. Their scores are masked (a select, so a NaN
// score becomes -Inf and P = 0), but 0·V is NaN where V is NaN or Inf:
// so the one V tile per block that runs past the sequence (its last) is
// copied on the producer's own mbarrier, the producer warp zeroes those
// rows, fences them for the async proxy (fence.proxy.async, PTX ISA
// §9.7.13.4) and only then arrives on the stage's full barrier, as the
// sm_80 kernels zero-fill. Query rows past the end are computed and not
// stored.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// Tile sizes and roles.
const (
	Consumers = 2                   // consumer warpgroups, 64 queries each
	FlashM    = 64 * Consumers      // queries per block
	FlashN    = 128                 // keys per tile
	Stages    = 2                   // stages of the K ring and of the V ring
	Threads   = 128*Consumers + 128 // the consumer warpgroups and a producer warpgroup
	Chunk     = 64                  // values of a TMA box row: 128 bytes, the swizzle's width
	Box       = 64                  // rows of a TMA box
	producer  = 4 * Consumers       // the producer warp's index (the first of its warpgroup)
	// Registers per thread after setmaxnreg: 128·producerRegs +
	// 256·consumerRegs = 64,512 ≤ 64K.
	producerRegs = 40
	consumerRegs = 232
)

// A codec is a 16-bit element type's conversions from float32.
type codec[T any] interface {
	store(float32) T
	pack(lo, hi float32) uint32
}

type f16c struct{}

func (f16c) store(v float32) gpu.Half   { return gpu.ToHalf(v) }
func (f16c) pack(lo, hi float32) uint32 { return gpu.PackHalf2(gpu.ToHalf(lo), gpu.ToHalf(hi)) }

type bf16c struct{}

func (bf16c) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }
func (bf16c) pack(lo, hi float32) uint32 {
	return gpu.PackBFloat162(gpu.ToBFloat16(lo), gpu.ToBFloat16(hi))
}

// ---------------------------------------------------------------------------
// kernels: q, k and v are read through their tensor maps (qmap: rows of
// heads·headDim values, kmap and vmap: rows of kvHeads·headDim, boxes of
// 64×64 with 128-byte swizzle); totalQ and totalK are their row counts.
// The q, k and v parameters themselves are not read: they are there so
// that every launch names the buffers it reads (the launcher checks them
// like any argument).

//kern:kernel block=384 minblocks=1 nobounds fastmath
func FlashF16D128(t gpu.Thread, out []gpu.Half, lse []float32, q, k, v []gpu.Half, qmap, kmap, vmap []uint64, cuQ, cuK []int32, totalQ, totalK, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash[gpu.Half, f16c, [64]float32](f16c{}, t, out, lse, qmap, kmap, vmap, cuQ, cuK, totalQ, totalK, heads, kvHeads, scaleLog2, causal, wantLSE, 128, false)
}

//kern:kernel block=384 minblocks=1 nobounds fastmath
func FlashBF16D128(t gpu.Thread, out []gpu.BFloat16, lse []float32, q, k, v []gpu.BFloat16, qmap, kmap, vmap []uint64, cuQ, cuK []int32, totalQ, totalK, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash[gpu.BFloat16, bf16c, [64]float32](bf16c{}, t, out, lse, qmap, kmap, vmap, cuQ, cuK, totalQ, totalK, heads, kvHeads, scaleLog2, causal, wantLSE, 128, true)
}

// flash is the kernel body; hd (64 or 128) and bf are constants at every
// call, so the branches on them fold, and O is the accumulator of a
// 64×hd tile of O ([hd/2]float32: one m64n{hd}k16 wgmma per k-step).
func flash[T gpu.Elem, C codec[T], O gpu.WGAccum](c C, t gpu.Thread, out []T, lse []float32, qmap, kmap, vmap []uint64, cuQ, cuK []int32, totalQ, totalK, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool, hd int, bf bool) {
	b, h, mb := t.BlockIdx().Z, t.BlockIdx().Y, t.BlockIdx().X
	qs, qe := int(cuQ[b]), int(cuQ[b+1])
	ks, ke := int(cuK[b]), int(cuK[b+1])
	if qs < 0 || qe < qs || qe > totalQ || ks < 0 || ke < ks || ke > totalK {
		panic("ops.FlashAttention: cuSeqQ or cuSeqK is not an ordered list of offsets within the tokens")
	}
	lq, lk := qe-qs, ke-ks
	if lq > t.GridDim().X*FlashM {
		panic("ops.FlashAttention: a query sequence is longer than maxSeqQ")
	}
	if mb*FlashM >= lq {
		return
	}
	kvh := int(uint32(h) / (uint32(heads) / uint32(kvHeads)))
	// Keys this block needs: all lk, or, causal, up to its last row's
	// diagonal (bottom-right aligned).
	kend := lk
	if causal {
		kend = min(lk, (mb+1)*FlashM+lk-lq)
	}
	ntiles := 0
	if kend > 0 {
		ntiles = (kend + FlashN - 1) >> 7 // FlashN = 128
	}

	qTile, kvTile := FlashM*hd, FlashN*hd // values of the Q tile and of one K or V tile
	sm := gpu.DynShared[T](t)
	// bars: Q landed, then per stage K full, V full, K empty, V empty,
	// then the ragged V tile's landing (the producer's own).
	bars := gpu.Shared[uint64](t, 2+4*Stages)
	const fullK, fullV, emptyK, emptyV, ragged = 1, 1 + Stages, 1 + 2*Stages, 1 + 3*Stages, 1 + 4*Stages
	tid := t.ThreadIdx().X
	if tid == 0 {
		gpu.MbarrierInit(t, &bars[0], 1)
		gpu.MbarrierInit(t, &bars[ragged], 1)
		//kern:unroll
		for s := 0; s < Stages; s++ {
			gpu.MbarrierInit(t, &bars[fullK+s], 1)
			gpu.MbarrierInit(t, &bars[fullV+s], 1)
			gpu.MbarrierInit(t, &bars[emptyK+s], 128*Consumers)
			gpu.MbarrierInit(t, &bars[emptyV+s], 128*Consumers)
		}
	}
	t.Sync() // the barriers are initialised before anyone uses them

	if t.Warp() >= producer {
		// The producer warpgroup: its registers go to the consumers
		// (every warp of it, together), and only its first warp works.
		gpu.SetMaxNRegDec(t, producerRegs)
		if t.Warp() != producer {
			return
		}
		// Producer: lane 0 issues every copy; the whole warp zeroes the
		// ragged V tile (ragged below).
		rj := ntiles // the V tile that runs past the sequence, if any
		if ntiles*FlashN > lk {
			rj = ntiles - 1
		}
		if t.Lane() == 0 && ntiles > 0 {
			gpu.MbarrierArriveExpectTx(t, &bars[0], qTile*2)
			//kern:unroll
			for cc := 0; cc < 2; cc++ {
				//kern:unroll
				for bx := 0; bx < FlashM/Box; bx++ {
					if cc < hd/Chunk {
						gpu.TMALoad2D(t, &sm[cc*FlashM*Chunk+bx*Box*Chunk], &qmap[0], h*hd+Chunk*cc, qs+mb*FlashM+bx*Box, &bars[0])
					}
				}
			}
			// K_j, then V_j: the consumers release K_{j-1} one tile
			// before V_{j-1} (see below), so K runs ahead.
			for j := 0; j < ntiles; j++ {
				s := j % Stages
				if j >= Stages {
					for !gpu.MbarrierTryWait(t, &bars[emptyK+s], (j/Stages-1)&1) {
					}
				}
				gpu.MbarrierArriveExpectTx(t, &bars[fullK+s], kvTile*2)
				kb := qTile + kvTile*s
				//kern:unroll
				for cc := 0; cc < 2; cc++ {
					//kern:unroll
					for bx := 0; bx < FlashN/Box; bx++ {
						if cc < hd/Chunk {
							gpu.TMALoad2D(t, &sm[kb+cc*FlashN*Chunk+bx*Box*Chunk], &kmap[0], kvh*hd+Chunk*cc, ks+j*FlashN+bx*Box, &bars[fullK+s])
						}
					}
				}
				if j >= Stages {
					for !gpu.MbarrierTryWait(t, &bars[emptyV+s], (j/Stages-1)&1) {
					}
				}
				// The ragged tile lands on the producer's own barrier.
				vbar := &bars[fullV+s]
				if j == rj {
					vbar = &bars[ragged]
				}
				gpu.MbarrierArriveExpectTx(t, vbar, kvTile*2)
				vb := qTile + kvTile*(Stages+s)
				//kern:unroll
				for cc := 0; cc < 2; cc++ {
					//kern:unroll
					for bx := 0; bx < FlashN/Box; bx++ {
						if cc < hd/Chunk {
							gpu.TMALoad2D(t, &sm[vb+cc*FlashN*Chunk+bx*Box*Chunk], &vmap[0], kvh*hd+Chunk*cc, ks+j*FlashN+bx*Box, vbar)
						}
					}
				}
			}
		}
		if rj < ntiles {
			// Ragged V tile: once it has landed, the warp zeroes its rows
			// past the sequence (the next sequence's values: masked, but
			// a NaN or Inf there would survive 0·V), fences them for the
			// async proxy that wgmma reads through, and lane 0 completes
			// the stage's full barrier for the consumers. A row's 128
			// bytes in each chunk stay that row's under the swizzle, so
			// whole rows are zeroed without unswizzling.
			for !gpu.MbarrierTryWait(t, &bars[ragged], 0) {
			}
			vb := qTile + kvTile*(Stages+rj%Stages)
			var zero T
			for i := (lk-rj*FlashN)*Chunk + t.Lane(); i < FlashN*Chunk; i += 32 {
				//kern:unroll
				for cc := 0; cc < 2; cc++ {
					if cc < hd/Chunk {
						sm[vb+cc*FlashN*Chunk+i] = zero
					}
				}
			}
			gpu.FenceProxyAsync(t)
			t.SyncWarp()
			if t.Lane() == 0 {
				gpu.MbarrierArrive(t, &bars[fullV+rj%Stages])
			}
		}
		return
	}

	// Consumer warpgroups: cw owns queries 64cw.. of the block, its warp
	// wid rows 16wid.. of those.
	gpu.SetMaxNRegInc(t, consumerRegs)
	cw, wid := t.Warp()>>2, t.Warp()&3
	lane := t.Lane()
	g, tig := lane>>2, lane&3
	first := mb*FlashM + 64*cw // the warpgroup's first query row in the sequence
	row0 := first + wid*16 + g // this lane's first query row
	// O rows g, g+8 of the warp: o[4j+e] is dim 8j+2·tig+e%2 of row
	// g+8·(e/2) (wgmma's D layout).
	var o O
	m := [2]float32{negInf(), negInf()}
	var l [2]float32
	qd := gpu.WGMMADesc(t, &sm[64*cw*Chunk], 0, 1024, gpu.Swizzle128B)
	if ntiles > 0 {
		for !gpu.MbarrierTryWait(t, &bars[0], 0) {
		}
	}
	// Software pipeline: step j issues S_j = Q·K_jᵀ, then does tile j-1's
	// softmax and P·V while S_j runs on the tensor cores, and waits for
	// both at its end, where it releases K_j and V_{j-1}; the producer
	// then has one step to refill each stage before it is needed. sn holds
	// the S being computed, sc the one being used. No wgmma is in flight
	// across a branch ptxas cannot prove uniform (the loop's own test, a
	// spin loop, the mask) and none is under one: ptxas would serialise
	// the wgmmas (C7518/C7519). So the last step (j = ntiles) issues an S
	// nobody uses, from a K stage already read (its data is stale but
	// nobody writes it any more), instead of skipping the wgmma.
	var sn [64]float32
	if ntiles > 0 {
		// S_0 (the same k-steps as in the loop, stage 0).
		for !gpu.MbarrierTryWait(t, &bars[fullK], 0) {
		}
		kd := gpu.WGMMADesc(t, &sm[qTile], 0, 1024, gpu.Swizzle128B)
		gpu.WGMMAFence(t)
		//kern:unroll
		for kk := 0; kk < 8; kk++ {
			if kk < hd/16 {
				qstep := uint64(FlashM*8*(kk/4) + 2*(kk%4))
				kstep := uint64(FlashN*8*(kk/4) + 2*(kk%4))
				if bf {
					gpu.WGMMABF16(t, &sn, qd+qstep, kd+kstep, kk > 0)
				} else {
					gpu.WGMMAF16(t, &sn, qd+qstep, kd+kstep, kk > 0)
				}
			}
		}
		gpu.WGMMACommitGroup(t)
		gpu.WGMMAWaitGroup(t, 0)
		gpu.MbarrierArrive(t, &bars[emptyK]) // this thread is done with K_0
	}
	for j := 1; j <= ntiles; j++ {
		jt, s := j-1, j%Stages // the tile whose S is in sn; S_j's stage
		sv := jt % Stages
		sc := mask(sn, jt*FlashN, lk, lq, first, row0, tig, causal)
		if j < ntiles {
			for !gpu.MbarrierTryWait(t, &bars[fullK+s], (j/Stages)&1) {
			}
		}
		for !gpu.MbarrierTryWait(t, &bars[fullV+sv], (jt/Stages)&1) {
		}
		kd := gpu.WGMMADesc(t, &sm[qTile+kvTile*s], 0, 1024, gpu.Swizzle128B)
		// S = Q·Kᵀ (64×128, f32): hd/16 k-steps; a descriptor step of 2
		// is 32 bytes (16 dims) inside the swizzled row; the next 64-dim
		// chunk is FlashM·128 bytes on for Q, FlashN·128 for K (steps of
		// 16 bytes).
		gpu.WGMMAFence(t)
		//kern:unroll
		for kk := 0; kk < 8; kk++ {
			if kk < hd/16 {
				qstep := uint64(FlashM*8*(kk/4) + 2*(kk%4))
				kstep := uint64(FlashN*8*(kk/4) + 2*(kk%4))
				if bf {
					gpu.WGMMABF16(t, &sn, qd+qstep, kd+kstep, kk > 0)
				} else {
					gpu.WGMMAF16(t, &sn, qd+qstep, kd+kstep, kk > 0)
				}
			}
		}
		gpu.WGMMACommitGroup(t)

		// Tile j-1: softmax, rescale O, then O += P·V.
		p, alpha, mn, ln := softmax(c, t, sc, m, l, scaleLog2)
		m, l = mn, ln
		//kern:unroll
		for dt := 0; dt < 16; dt++ {
			if dt < hd/8 {
				o[4*dt] *= alpha[0]
				o[4*dt+1] *= alpha[0]
				o[4*dt+2] *= alpha[1]
				o[4*dt+3] *= alpha[1]
			}
		}
		// V as an MN-major B: 8-key groups 1024 bytes apart (sbo), the
		// 64-dim chunks 16 KiB apart (lbo, used when hd is 128); 8 k-steps
		// of 16 keys = 2048 bytes = a descriptor step of 128.
		vd := gpu.WGMMADesc(t, &sm[qTile+kvTile*(Stages+sv)], FlashN*Chunk*2, 1024, gpu.Swizzle128B)
		gpu.WGMMAFence(t)
		//kern:unroll
		for kk := 0; kk < FlashN/16; kk++ {
			if bf {
				gpu.WGMMABF16RegAMajor(t, &o, p[kk], vd+uint64(128*kk), true, gpu.MNMajor)
			} else {
				gpu.WGMMAF16RegAMajor(t, &o, p[kk], vd+uint64(128*kk), true, gpu.MNMajor)
			}
		}
		gpu.WGMMACommitGroup(t)
		gpu.WGMMAWaitGroup(t, 0) // S_j and P·V_{j-1} are complete
		if j < ntiles {
			gpu.MbarrierArrive(t, &bars[emptyK+s]) // this thread is done with K_j
		}
		gpu.MbarrierArrive(t, &bars[emptyV+sv]) // and with V_{j-1}
	}

	// Finish: the quad's partial sums, O/ℓ, the store and the LSE.
	qStride := heads * hd
	//kern:unroll
	for r := 0; r < 2; r++ {
		l[r] += gpu.ShflXor(t, l[r], 1)
		l[r] += gpu.ShflXor(t, l[r], 2)
		inv := float32(0)
		if l[r] > 0 {
			inv = 1 / l[r]
		}
		qi := row0 + 8*r
		if qi < lq {
			ob := (qs+qi)*qStride + h*hd + 2*tig
			//kern:unroll
			for dt := 0; dt < 16; dt++ {
				if dt < hd/8 {
					out[ob+8*dt] = c.store(o[4*dt+2*r] * inv)
					out[ob+8*dt+1] = c.store(o[4*dt+2*r+1] * inv)
				}
			}
			if wantLSE && tig == 0 {
				x := negInf()
				if l[r] > 0 {
					x = gpu.FMA(m[r], scaleLog2, gpu.Log2(l[r])) * math.Ln2
				}
				lse[h*totalQ+qs+qi] = x
			}
		}
	}
}

// mask sets the scores of keys past the sequence or past the diagonal
// to -Inf, only in the tiles that reach either: element e of sc is key
// k0 + 2·tig + 8·(e/4) + e%2 of row r = (e/2)%2 (rows g and g+8 of the
// warp; row0 is row g's query).
func mask(sc [64]float32, k0, lk, lq, first, row0, tig int, causal bool) [64]float32 {
	if k0+FlashN > lk || causal && k0+FlashN-1 > first+lk-lq {
		var lim [2]int32
		//kern:unroll
		for r := 0; r < 2; r++ {
			lr := lk
			if causal {
				lr = min(lk, row0+8*r+lk-lq+1)
			}
			lim[r] = int32(lr - k0 - 2*tig)
		}
		//kern:unroll
		for e := 0; e < 64; e++ {
			if int32(8*(e/4)+e%2) >= lim[(e/2)%2] {
				sc[e] = negInf()
			}
		}
	}
	return sc
}

// softmax is the online softmax of one masked tile for the lane's rows
// g (r=0) and g+8 (r=1), as attnk: it takes the new row maximum (m is
// the raw maximum: the scale folds into one FFMA per exponent) and
// returns P packed as the m16n8k16 A fragments of the eight k-steps of
// P·V (the D fragment of S columns 16kk.. is the A fragment of k-step
// kk: a[r] from n-tile 2kk, a[2+r] from n-tile 2kk+1), the factors alpha
// that rescale O, and the new m and ℓ. It has no branch: it runs while a
// wgmma is in flight.
func softmax[T gpu.Elem, C codec[T]](c C, t gpu.Thread, sc [64]float32, m, l [2]float32, scaleLog2 float32) (p [FlashN / 16][4]uint32, alpha, mo, lo [2]float32) {
	//kern:unroll
	for r := 0; r < 2; r++ {
		mx := m[r]
		//kern:unroll
		for nt := 0; nt < FlashN/8; nt++ {
			mx = gpu.Max(mx, gpu.Max(sc[4*nt+2*r], sc[4*nt+2*r+1]))
		}
		mx = gpu.Max(mx, gpu.ShflXor(t, mx, 1))
		mx = gpu.Max(mx, gpu.ShflXor(t, mx, 2))
		// Nothing unmasked yet (mx = -Inf): a finite msub keeps
		// 2^(-Inf - msub) = 0, not NaN. A max, not a branch.
		msub := gpu.Max(mx*scaleLog2, -0x1p127)
		alpha[r] = gpu.Exp2(gpu.FMA(m[r], scaleLog2, -msub))
		mo[r] = mx
		sum := float32(0)
		//kern:unroll
		for nt := 0; nt < FlashN/8; nt++ {
			p0 := gpu.Exp2(gpu.FMA(sc[4*nt+2*r], scaleLog2, -msub))
			p1 := gpu.Exp2(gpu.FMA(sc[4*nt+2*r+1], scaleLog2, -msub))
			sum += p0 + p1
			p[nt/2][r+2*(nt%2)] = c.pack(p0, p1)
		}
		lo[r] = l[r]*alpha[r] + sum
	}
	return p, alpha, mo, lo
}

func negInf() float32 { return math.Float32frombits(0xff800000) }
