package decodemma

// Paged decode attention on the tensor cores (ops/paged.go describes the
// layouts, the launch and the versions).

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// Tiling: a block takes up to Group query heads of one KV head (the N of
// both products); each of its warps walks Step tokens at a time. The
// Paged* kernels are ops' v2, the PagedAhead* ones its v3. v3 at head
// dim 128 carries maxregs=244: two blocks of 128 threads fit an SM at
// any count up to 255, but without the cap ptxas 13.5 took 248–250 on
// sm_90 for the same live values (no spill at 244).
const (
	Group = 8
	Step  = 16
	warps = 4
	// red holds each warp's Oᵀ as rows of Group heads, one row per dim,
	// row d at d + d/4 (redRows rows for a warp at head dim 128): a lane's
	// 8-byte stores (two heads of one dim) in a half warp then cover dims
	// 4gid + c, gid < 4, c even, at banks 8(gid + c + c/4) + 2tig mod 32,
	// all distinct; the final reads take 4 consecutive rows per warp.
	redRows = 128 + 128/4
)

//kern:kernel block=128 nobounds pdl
func PagedF16D64(t gpu.Thread, out []gpu.Half, po, pml []float32, cnt []uint32, q, kc, vc []gpu.Half, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit int, scaleLog2 float32, early bool) {
	red := gpu.Shared[float32](t, warps*redRows*Group)
	paged(f16m{}, t, out, po, pml, cnt, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit, scaleLog2, 64, false, false, early, red)
}

//kern:kernel block=128 nobounds pdl
func PagedAheadF16D64(t gpu.Thread, out []gpu.Half, po, pml []float32, cnt []uint32, q, kc, vc []gpu.Half, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit int, scaleLog2 float32, early bool) {
	red := gpu.Shared[float32](t, warps*redRows*Group)
	paged(f16m{}, t, out, po, pml, cnt, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit, scaleLog2, 64, true, false, early, red)
}

//kern:kernel block=128 nobounds pdl
func PagedF16D128(t gpu.Thread, out []gpu.Half, po, pml []float32, cnt []uint32, q, kc, vc []gpu.Half, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit int, scaleLog2 float32, early bool) {
	red := gpu.Shared[float32](t, warps*redRows*Group)
	paged(f16m{}, t, out, po, pml, cnt, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit, scaleLog2, 128, false, false, early, red)
}

//kern:kernel block=128 maxregs=244 nobounds pdl
func PagedAheadF16D128(t gpu.Thread, out []gpu.Half, po, pml []float32, cnt []uint32, q, kc, vc []gpu.Half, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit int, scaleLog2 float32, early bool) {
	red := gpu.Shared[float32](t, warps*redRows*Group)
	paged(f16m{}, t, out, po, pml, cnt, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit, scaleLog2, 128, true, true, early, red)
}

//kern:kernel block=128 nobounds pdl
func PagedBF16D64(t gpu.Thread, out []gpu.BFloat16, po, pml []float32, cnt []uint32, q, kc, vc []gpu.BFloat16, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit int, scaleLog2 float32, early bool) {
	red := gpu.Shared[float32](t, warps*redRows*Group)
	paged(bf16m{}, t, out, po, pml, cnt, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit, scaleLog2, 64, false, false, early, red)
}

//kern:kernel block=128 nobounds pdl
func PagedAheadBF16D64(t gpu.Thread, out []gpu.BFloat16, po, pml []float32, cnt []uint32, q, kc, vc []gpu.BFloat16, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit int, scaleLog2 float32, early bool) {
	red := gpu.Shared[float32](t, warps*redRows*Group)
	paged(bf16m{}, t, out, po, pml, cnt, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit, scaleLog2, 64, true, false, early, red)
}

//kern:kernel block=128 nobounds pdl
func PagedBF16D128(t gpu.Thread, out []gpu.BFloat16, po, pml []float32, cnt []uint32, q, kc, vc []gpu.BFloat16, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit int, scaleLog2 float32, early bool) {
	red := gpu.Shared[float32](t, warps*redRows*Group)
	paged(bf16m{}, t, out, po, pml, cnt, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit, scaleLog2, 128, false, false, early, red)
}

//kern:kernel block=128 maxregs=244 nobounds pdl
func PagedAheadBF16D128(t gpu.Thread, out []gpu.BFloat16, po, pml []float32, cnt []uint32, q, kc, vc []gpu.BFloat16, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit int, scaleLog2 float32, early bool) {
	red := gpu.Shared[float32](t, warps*redRows*Group)
	paged(bf16m{}, t, out, po, pml, cnt, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit, scaleLog2, 128, true, true, early, red)
}

// paged is the decode body. Block (split, kvHead·headChunks + chunk, seq)
// takes the tokens [split·partition, (split+1)·partition) of its sequence
// and up to 8 query heads sharing one KV head, so each K and V row is read
// once for the group. With loop (Strided) block x takes splits x,
// x+gridDim.x, … of nsplit, each SplitLen tokens long, one after another,
// the block's partials written per split as if each were a block of its
// own. Warp w takes the 16-token steps w, w+4, ... and
// keeps its own running max m, sum ℓ and output; the four meet in shared
// memory at the end. With gid = lane/4, tig = lane%4 (gpu/mma.go has the
// fragment layouts), one step at tokens tb..tb+15, all in one page (tb is
// a multiple of 16, pages hold 16 or 32):
//
//  1. loads: the page number (read one step ahead), then K of tokens
//     tb+gid and tb+8+gid, dims 16s+4tig..+3 for each k-step s, and V of
//     tokens tb+2tig, +1, +8, +9, dims 32j+4gid..+3, each an 8-byte load
//     (ld.v4.b16, already the packed pairs an mma takes; a Load8 of
//     16-bit elements is split into halves that ptxas re-packs with a
//     PRMT each, and the packs wait on the load). Each load instruction
//     reads whole 32-byte sectors: a quad 32 bytes of a K row, 8 lanes 64
//     bytes of a V row. Tokens past the split's end are clamped to its
//     last token (a row of the same page) and their scores masked, so no
//     load sits under a per-lane branch. Without ahead (v2) the step's
//     products follow its loads in the same iteration, and ptxas issues
//     about half of the loads after the first product; with ahead (v3)
//     the iteration loads the warp's next step into a second register
//     set and computes the step loaded an iteration earlier, so all 32
//     loads go out back to back in a block of their own, a whole step
//     before their use.
//  2. S = Q·Kᵀ, two m16n8k16 tiles of 8 tokens (A = the group's queries,
//     rows 8..15 zero; B = K). A dot product does not care in which order
//     it meets its dims, so each k-step takes the dims that make both
//     fragments plain 8-byte loads: in k-step s, k = 2tig+e ↔ dim
//     16s+4tig+e and k = 2tig+8+e ↔ 16s+4tig+2+e, for Q (loaded once,
//     unscaled, exact) as for K. Lane (gid, tig) gets head gid's scores
//     at tokens tb+2tig, +1 (tile 0) and tb+8+2tig, +1 (tile 1).
//  3. online softmax per head on the quad of lanes that holds it (two
//     xor-shuffles for the max); P = 2^(s·scale - m) is rounded to T.
//  4. Oᵀ += Vᵀ·Pᵀ, m16n8k16 with M = 16 dims, N = the 8 heads, K = the
//     step's 16 tokens: the B fragment is exactly the lane's two packed
//     P pairs (no shuffle), and the A fragment pairs two tokens' values
//     of one dim, a prmt of the two tokens' loaded words. M-tile mt covers
//     dims D, D+1 with D = 32(mt/2) + 4gid + 2(mt%2) (rows gid, gid+8), so
//     lane (gid, tig) accumulates heads 2tig, 2tig+1 at dims D, D+1.
//
// P is rounded to T to enter the second product (as FlashAttention-2
// does); ℓ sums the unrounded P, so the error is a unit of T relative to
// Σ P·|v| / ℓ. Empty warps and splits keep m = -inf, ℓ = 0 and write 0.
func paged[T gpu.Elem, C codec[T]](c C, t gpu.Thread, out []T, po, pml []float32, cnt []uint32, q, kc, vc []T, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition, nsplit int, scaleLog2 float32, hd int, ahead, loop, early bool, red []float32) {
	// The sequence's length and its block table come from the host (early:
	// no kernel still running writes them), so they are read and checked
	// before the wait for the kernels before this one (programmatic
	// dependent launch, gpu/pdl.go), which wrote q and the cache.
	if !early {
		gpu.WaitPriorGrids(t)
	}
	bx, hy, seq := t.BlockIdx().X, t.BlockIdx().Y, t.BlockIdx().Z
	stride := t.GridDim().X // blocks per (sequence, head group), ≤ nsplit
	if !loop {
		nsplit = stride // a block per split
	}
	// 32-bit divisions: a 64-bit one is a subroutine call in SASS.
	group := udiv(heads, kvHeads)
	chunks := udiv(group+Group-1, Group)
	kvh, g0 := udiv(hy, chunks), urem(hy, chunks)*Group
	ng := min(Group, group-g0)
	n := int(seqLens[seq])
	if n < 0 || n > maxBlocks<<bsShift {
		panic("ops.PagedAttention: a sequence length is negative or beyond its block table")
	}
	if n > nsplit*partition {
		panic("ops.PagedAttention: a sequence is longer than maxSeqLen")
	}
	// The sequence's splits, part tokens each: partition, or with loop
	// (Strided) SplitLen's spread, of which used hold tokens (an empty
	// sequence's split 0 stands for it). Block bx takes splits bx,
	// bx+stride, …; one with none leaves at once, before any barrier
	// (block-uniform), having read nothing but the length.
	part, used := partition, 1
	if loop {
		part = SplitLen(n, nsplit, partition)
		if bx > 0 && bx*part >= n {
			return
		}
		used = max(1, udiv(n+part-1, part))
	}
	// direct: the block writes out itself, with no partials and no
	// finish: a launch without split-K, or (v3) a sequence that fits in
	// split 0, whose finish would combine that one split with itself
	// (two round trips through L2 for a rounding of the same value).
	direct := nsplit == 1 || ahead && n <= part
	if direct && bx > 0 {
		return // an empty split (block-uniform, before any barrier)
	}
	tid, warp, lane := t.ThreadIdx().X, t.Warp(), t.Lane()
	// The length again, from shared memory where the loop and the finish
	// need it: kept in a register it costs v3 6–10 registers, and loaded
	// from global memory again it is an L2 round trip on the kernel's
	// chain each time. The block table check's barrier (BlockMax)
	// publishes it.
	nsh := gpu.Shared[int32](t, 1)
	if tid == 0 {
		nsh[0] = int32(n)
	}
	btRow := seq * maxBlocks
	// The warp's first page of the block's first split (the loop's first
	// page number, below) is read before the check, so that the two
	// loads of the table are one round trip, and kept in shared memory
	// (pgs), not in a register the loop would hold.
	pgs := gpu.Shared[int32](t, warps)
	pg0 := blockTable[btRow+max(min(bx*part+Step*warp, min(n, bx*part+part)-1), 0)>>bsShift]
	// Check the block table entries the block's splits read once, up
	// front, so the loop below needs no check.
	bad := 0
	for split := bx; ; split += stride {
		t1 := min(n, split*part+part)
		for i := (split*part)>>bsShift + tid; i<<bsShift < t1; i += warps * 32 {
			if p := blockTable[btRow+i]; p < 0 || int(p) >= npages {
				bad = 1
			}
		}
		if !loop || split+stride >= used {
			break
		}
	}
	if lane == 0 {
		pgs[warp] = pg0 // after the check's loads: the store waits for pg0
	}
	if gpu.BlockMax(t, bad) != 0 {
		panic("ops.PagedAttention: a block table entry is not a page of the cache")
	}
	ms := gpu.Shared[float32](t, warps*Group)
	ls := gpu.Shared[float32](t, warps*Group)

	if early {
		gpu.WaitPriorGrids(t)
	}

	gid, tig := lane>>2, lane&3
	// The A fragments of S = Q·Kᵀ: head gid, dims 16s+4tig..+3 per k-step s (zero for
	// heads past the group).
	var qf [8][2]uint32
	if gid < ng {
		qrow := (seq*heads+kvh*group+g0+gid)*hd + 4*tig
		//kern:unroll
		for s := 0; s < 8; s++ {
			if s < hd/16 {
				qf[s] = c.pack4(q, qrow+16*s)
			}
		}
	}

	rowStride := kvHeads * hd // elements per token row of the cache
	pmask := 1<<bsShift - 1
	wrows := hd + hd/4
	// split < used is t0 < n after the first (bx < used, checked above).
	for split := bx; ; {
		n, part := n, part
		if loop {
			n = int(nsh[0])
			part = SplitLen(n, nsplit, partition)
		}
		t0 := split * part
		t1 := min(n, t0+part)
		last := t1 - 1
		m, l := negInf(), float32(0)
		var acc [8][4]float32
		// The iteration at step tb loads step lt = tb+dist into the n*
		// registers (its page number read the iteration before). Without
		// ahead, dist is 0 and it computes from them at once; with it, dist
		// is the warp's next step and it computes step tb from the registers
		// the previous iteration loaded (the first iteration, tb < t0, only
		// loads).
		var kx, ky, nkx, nky [8][2]uint32 // K of tokens tb+gid, tb+8+gid, per k-step
		var va, vb, vcc, vd, nva, nvb, nvc, nvd [4][2]uint32
		dist := 0
		if ahead {
			dist = warps * Step
		}
		tb := t0 + Step*warp - dist
		var pg int
		if split == bx {
			pg = int(pgs[warp])
		} else {
			pg = int(blockTable[btRow+max(min(tb+dist, last), 0)>>bsShift])
		}
		for ; tb < t1; tb += warps * Step {
			// 1. loads
			if lt := tb + dist; !ahead || lt < t1 {
				pbase := (pg<<bsShift)*rowStride + kvh*hd
				pg = int(blockTable[btRow+min(lt+warps*Step, last)>>bsShift])
				k0 := pbase + (min(lt+gid, last)&pmask)*rowStride + 4*tig
				k1 := pbase + (min(lt+8+gid, last)&pmask)*rowStride + 4*tig
				//kern:unroll
				for s := 0; s < 8; s++ {
					if s < hd/16 {
						nkx[s] = c.pack4(kc, k0+16*s)
						nky[s] = c.pack4(kc, k1+16*s)
					}
				}
				v0 := pbase + (min(lt+2*tig, last)&pmask)*rowStride + 4*gid
				v1 := pbase + (min(lt+2*tig+1, last)&pmask)*rowStride + 4*gid
				v2 := pbase + (min(lt+8+2*tig, last)&pmask)*rowStride + 4*gid
				v3 := pbase + (min(lt+9+2*tig, last)&pmask)*rowStride + 4*gid
				//kern:unroll
				for j := 0; j < 4; j++ {
					if j < hd/32 {
						nva[j] = c.pack4(vc, v0+32*j)
						nvb[j] = c.pack4(vc, v1+32*j)
						nvc[j] = c.pack4(vc, v2+32*j)
						nvd[j] = c.pack4(vc, v3+32*j)
					}
				}
			}
			if !ahead {
				kx, ky, va, vb, vcc, vd = nkx, nky, nva, nvb, nvc, nvd
			} else if tb < t0 {
				kx, ky, va, vb, vcc, vd = nkx, nky, nva, nvb, nvc, nvd
				continue
			}

			// 2. S = Q·Kᵀ
			var sa, sb [4]float32
			//kern:unroll
			for s := 0; s < 8; s++ {
				if s < hd/16 {
					a := [4]uint32{qf[s][0], 0, qf[s][1], 0}
					sa = c.mma(t, a, kx[s], sa)
					sb = c.mma(t, a, ky[s], sb)
				}
			}

			// 3. online softmax of head gid over the step's tokens
			s0, s1, s2, s3 := sa[0]*scaleLog2, sa[1]*scaleLog2, sb[0]*scaleLog2, sb[1]*scaleLog2
			if tb+2*tig >= t1 {
				s0 = negInf()
			}
			if tb+2*tig+1 >= t1 {
				s1 = negInf()
			}
			if tb+8+2*tig >= t1 {
				s2 = negInf()
			}
			if tb+9+2*tig >= t1 {
				s3 = negInf()
			}
			mx := gpu.Max(gpu.Max(s0, s1), gpu.Max(s2, s3))
			mx = gpu.Max(mx, gpu.ShflXor(t, mx, 1))
			mx = gpu.Max(mx, gpu.ShflXor(t, mx, 2))
			// Token tb < t1 is in every step, so mnew is finite and
			// 2^(-inf - mnew) = 0 needs no special case.
			mnew := gpu.Max(m, mx)
			alpha := gpu.Exp2(m - mnew)
			p0, p1, p2, p3 := gpu.Exp2(s0-mnew), gpu.Exp2(s1-mnew), gpu.Exp2(s2-mnew), gpu.Exp2(s3-mnew)
			l = l*alpha + ((p0 + p1) + (p2 + p3))
			m = mnew
			pb := [2]uint32{c.pack(p0, p1), c.pack(p2, p3)}
			// The lane's accumulators are heads 2tig and 2tig+1, whose
			// factors sit on quads 2tig and 2tig+1.
			al0 := gpu.ShflIdx(t, alpha, 8*tig)
			al1 := gpu.ShflIdx(t, alpha, 8*tig+4)

			// 4. Oᵀ += Vᵀ·Pᵀ
			//kern:unroll
			for mt := 0; mt < 8; mt++ {
				if mt < hd/16 {
					r, w := mt/2, mt%2
					a := [4]uint32{
						gpu.Prmt(va[r][w], vb[r][w], 0x5410), gpu.Prmt(va[r][w], vb[r][w], 0x7632),
						gpu.Prmt(vcc[r][w], vd[r][w], 0x5410), gpu.Prmt(vcc[r][w], vd[r][w], 0x7632),
					}
					acc[mt] = c.mma(t, a, pb, [4]float32{acc[mt][0] * al0, acc[mt][1] * al1, acc[mt][2] * al0, acc[mt][3] * al1})
				}
			}
			if ahead {
				kx, ky, va, vb, vcc, vd = nkx, nky, nva, nvb, nvc, nvd
			}
		}

		// The warps meet in shared memory (red's layout is at redRows).
		l += gpu.ShflXor(t, l, 1)
		l += gpu.ShflXor(t, l, 2)
		if tig == 0 {
			ms[warp*Group+gid], ls[warp*Group+gid] = m, l
		}
		//kern:unroll
		for mt := 0; mt < 8; mt++ {
			if mt < hd/16 {
				d := 32*(mt/2) + 4*gid + 2*(mt%2)
				gpu.Store2(red, (warp*wrows+d+d>>2)*Group+2*tig, [2]float32{acc[mt][0], acc[mt][1]})
				gpu.Store2(red, (warp*wrows+d+1+(d+1)>>2)*Group+2*tig, [2]float32{acc[mt][2], acc[mt][3]})
			}
		}
		t.Sync()
		// Thread i combines head i%8 at dim i/8: a warp reads 4 whole rows.
		for i := tid; i < Group*hd; i += warps * 32 {
			g, d := i&(Group-1), i>>3
			if g >= ng {
				continue
			}
			mm := negInf()
			//kern:unroll
			for w := 0; w < warps; w++ {
				mm = gpu.Max(mm, ms[w*Group+g])
			}
			msub := mm
			if mm == negInf() {
				msub = 0
			}
			s, lt := float32(0), float32(0)
			//kern:unroll
			for w := 0; w < warps; w++ {
				f := gpu.Exp2(ms[w*Group+g] - msub)
				s = gpu.FMA(f, red[(w*wrows+d+d>>2)*Group+g], s)
				lt = gpu.FMA(f, ls[w*Group+g], lt)
			}
			o := float32(0)
			if lt > 0 {
				o = s / lt
			}
			h := kvh*group + g0 + g
			if direct {
				out[(seq*heads+h)*hd+d] = c.store(o)
			} else {
				pi := (seq*heads+h)*nsplit + split
				po[pi*hd+d] = o
				if d == 0 {
					pml[2*pi], pml[2*pi+1] = mm, lt
				}
			}
		}
		// n and part are loaded again (nsh) rather than kept.
		if !loop {
			break
		}
		split += stride
		if nn := int(nsh[0]); split*SplitLen(nn, nsplit, partition) >= nn { // one load of the length
			break
		}
		t.Sync() // the combine above has read red, ms and ls
	}
	if !direct && ahead { // v3; v2 keeps its registers and the reduce kernel
		n, part := n, part
		if loop {
			n = int(nsh[0])
			part = SplitLen(n, nsplit, partition)
		}
		used := max(1, min(nsplit, udiv(n+part-1, part)))
		if bx < used { // block-uniform: a split past the sequence's end
			// The block's splits: 1 without loop (stride = nsplit ≥ used).
			pagedFinish(c, t, out, po, pml, cnt, ms, seq, hy, heads, hd, kvh*group+g0, ng, nsplit, udiv(used-bx+stride-1, stride), used)
		}
	}
}

// Strided says whether the kernel of version v3 (ahead) or v2 at head dim
// hd takes a sequence's splits in a grid-stride loop (paged's loop), so a
// launch may give each sequence and head group fewer blocks than splits;
// the others take one split per block and need a block per split. Only
// v3 at head dim 128 loops: in the loop ptxas gives v2 10–16 more
// registers and makes v3 at head dim 64 spill.
func Strided(ahead bool, hd int) bool { return ahead && hd == 128 }

// A codec is a 16-bit element type's conversions and its tensor-core
// product.
type codec[T any] interface {
	store(float32) T
	pack(lo, hi float32) uint32
	// pack4 loads s[i .. i+3] as two packed pairs.
	pack4(s []T, i int) [2]uint32
	mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32
}

type f16m struct{}

func (f16m) store(v float32) gpu.Half   { return gpu.ToHalf(v) }
func (f16m) pack(lo, hi float32) uint32 { return gpu.PackHalf2(gpu.ToHalf(lo), gpu.ToHalf(hi)) }
func (f16m) pack4(s []gpu.Half, i int) [2]uint32 {
	x := gpu.Load4(s, i)
	return [2]uint32{gpu.PackHalf2(x[0], x[1]), gpu.PackHalf2(x[2], x[3])}
}
func (f16m) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMAF16(t, a, b, c)
}

type bf16m struct{}

func (bf16m) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }
func (bf16m) pack(lo, hi float32) uint32 {
	return gpu.PackBFloat162(gpu.ToBFloat16(lo), gpu.ToBFloat16(hi))
}
func (bf16m) pack4(s []gpu.BFloat16, i int) [2]uint32 {
	x := gpu.Load4(s, i)
	return [2]uint32{gpu.PackBFloat162(x[0], x[1]), gpu.PackBFloat162(x[2], x[3])}
}
func (bf16m) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMABF16(t, a, b, c)
}

// udiv and urem divide non-negative ints below 2^32 in 32 bits.
func udiv(a, b int) int { return int(uint32(a) / uint32(b)) }
func urem(a, b int) int { return int(uint32(a) % uint32(b)) }

func negInf() float32 { return math.Float32frombits(0xff800000) }
