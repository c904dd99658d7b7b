package decodek

// Paged decode attention (ops/paged.go describes the layouts and the
// launch); the split-K reduce is decodemma's.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// Decode tiling: PagedChunk tokens of a split are scored together; each
// block takes up to PagedGroup query heads of one KV head.
const (
	PagedChunk = 64
	PagedGroup = 8
	pagedWarps = 4
)

//kern:kernel block=128 nobounds pdl
func PagedF16D64(t gpu.Thread, out []gpu.Half, po, pml []float32, q, kc, vc []gpu.Half, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition int, scaleLog2 float32) {
	qs := gpu.Shared[float32](t, PagedGroup*128)
	red := gpu.Shared[float32](t, pagedWarps*PagedGroup*128+2048)
	paged(f16m{}, t, out, po, pml, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, scaleLog2, 64, qs, red)
}

//kern:kernel block=128 nobounds pdl
func PagedF16D128(t gpu.Thread, out []gpu.Half, po, pml []float32, q, kc, vc []gpu.Half, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition int, scaleLog2 float32) {
	qs := gpu.Shared[float32](t, PagedGroup*128)
	red := gpu.Shared[float32](t, pagedWarps*PagedGroup*128+2048)
	paged(f16m{}, t, out, po, pml, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, scaleLog2, 128, qs, red)
}

//kern:kernel block=128 nobounds pdl
func PagedF16D256(t gpu.Thread, out []gpu.Half, po, pml []float32, q, kc, vc []gpu.Half, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition int, scaleLog2 float32) {
	qs := gpu.Shared[float32](t, PagedGroup*256)
	red := gpu.Shared[float32](t, pagedWarps*PagedGroup*256)
	paged(f16m{}, t, out, po, pml, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, scaleLog2, 256, qs, red)
}

//kern:kernel block=128 nobounds pdl
func PagedBF16D64(t gpu.Thread, out []gpu.BFloat16, po, pml []float32, q, kc, vc []gpu.BFloat16, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition int, scaleLog2 float32) {
	qs := gpu.Shared[float32](t, PagedGroup*128)
	red := gpu.Shared[float32](t, pagedWarps*PagedGroup*128+2048)
	paged(bf16m{}, t, out, po, pml, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, scaleLog2, 64, qs, red)
}

//kern:kernel block=128 nobounds pdl
func PagedBF16D128(t gpu.Thread, out []gpu.BFloat16, po, pml []float32, q, kc, vc []gpu.BFloat16, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition int, scaleLog2 float32) {
	qs := gpu.Shared[float32](t, PagedGroup*128)
	red := gpu.Shared[float32](t, pagedWarps*PagedGroup*128+2048)
	paged(bf16m{}, t, out, po, pml, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, scaleLog2, 128, qs, red)
}

//kern:kernel block=128 nobounds pdl
func PagedBF16D256(t gpu.Thread, out []gpu.BFloat16, po, pml []float32, q, kc, vc []gpu.BFloat16, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition int, scaleLog2 float32) {
	qs := gpu.Shared[float32](t, PagedGroup*256)
	red := gpu.Shared[float32](t, pagedWarps*PagedGroup*256)
	paged(bf16m{}, t, out, po, pml, q, kc, vc, blockTable, seqLens, heads, kvHeads, bsShift, maxBlocks, npages, partition, scaleLog2, 256, qs, red)
}

// paged is the decode body. Block (split, kvHead·headChunks + chunk,
// seq) scores the tokens [split·partition, (split+1)·partition) of its
// sequence against up to 8 query heads sharing one KV head, so each K and
// V row is read once for the group. Per chunk of 64 tokens:
//
//  1. scores: a token's row is split over tpt = hd/8 lanes, each holding
//     8 of its dims (two 8-byte loads, dims 4j.. and hd/2+4j.., so both
//     loads of a quarter warp are contiguous); the dot products with the
//     group's scaled queries (in shared memory, f32) are summed over the
//     tpt lanes with xor-shuffles and stored to shared memory;
//  2. softmax: warp w takes heads w and w+4, updates their running max
//     and sum and turns the chunk's scores into 2^(s - m);
//  3. P·V: warp w takes tokens w, w+4, ..., each lane hd/32 dims of V
//     (one coalesced row per warp and token), after rescaling its
//     accumulators by 2^(m_old - m_new). At head dim 256 a lane's 8
//     dims are 4·lane.. and 128 + 4·lane.., so each of its two 8-byte
//     loads is a contiguous 256 bytes across the warp.
//
// At the end the 4 warps' accumulators meet in shared memory. With one
// split the block writes out; with several it writes its normalised
// partial o and (m, ℓ) for PagedReduce.
//
// The kernels pass the static shared arrays (their lengths must be
// constants in the kernel): qs, the group's scaled queries (PagedGroup·hd
// floats), and red, the warps' accumulators (pagedWarps·PagedGroup·hd).
// Below head dim 256 both are sized for 128 and red is padded by 8 KiB:
// ptxas caps a kernel's registers at what the blocks its static shared
// memory lets share an SM can have; at 22.9 KB (10 blocks on sm_90) that
// cap is 64 and the head-dim-128 kernel spills. At 31 KB (7 blocks) it
// uses 71 registers without spilling, which allows 7 blocks anyway, so
// occupancy is unchanged. At 256 the arrays come to 42 KB unpadded, under
// the 48 KB static limit.
func paged[T gpu.Elem, C codec[T]](c C, t gpu.Thread, out []T, po, pml []float32, q, kc, vc []T, blockTable, seqLens []int32, heads, kvHeads, bsShift, maxBlocks, npages, partition int, scaleLog2 float32, hd int, qs, red []float32) {
	split, hy, seq := t.BlockIdx().X, t.BlockIdx().Y, t.BlockIdx().Z
	nsplit := t.GridDim().X
	// 32-bit divisions: a 64-bit one is a subroutine call in SASS, and
	// the registers ptxas saves around it spill.
	group := int(uint32(heads) / uint32(kvHeads))
	chunks := int(uint32(group+PagedGroup-1) / PagedGroup)
	kvh, g0 := int(uint32(hy)/uint32(chunks)), int(uint32(hy)%uint32(chunks))*PagedGroup
	ng := min(PagedGroup, group-g0)
	n := int(seqLens[seq])
	if n < 0 || n > maxBlocks<<bsShift {
		panic("ops.PagedAttention: a sequence length is negative or beyond its block table")
	}
	if n > nsplit*partition {
		panic("ops.PagedAttention: a sequence is longer than maxSeqLen")
	}
	t0 := split * partition
	t1 := min(n, t0+partition)
	tid, warp, lane := t.ThreadIdx().X, t.Warp(), t.Lane()
	// Check the block table entries this split reads once, up front, so
	// the loops below need no check (a panic there would sit under a
	// per-lane condition).
	bad := 0
	for i := t0>>bsShift + tid; i<<bsShift < t1; i += pagedWarps * 32 {
		if p := blockTable[seq*maxBlocks+i]; p < 0 || int(p) >= npages {
			bad = 1
		}
	}
	if gpu.BlockMax(t, bad) != 0 {
		panic("ops.PagedAttention: a block table entry is not a page of the cache")
	}

	lg := gpu.Shared[float32](t, PagedGroup*PagedChunk)
	ms := gpu.Shared[float32](t, PagedGroup)
	ls := gpu.Shared[float32](t, PagedGroup)
	al := gpu.Shared[float32](t, PagedGroup)

	// The scaled queries, permuted so that the score phase's lanes read
	// consecutive words: dim half·hd/2 + 4j + e of head g (lane j of a
	// token's tpt lanes, e < 4) sits at g·hd + (4·half + e)·tpt + j.
	tpt := hd / 8 // lanes per token in the score phase
	qb := (seq*heads + kvh*group + g0) * hd
	for i := tid; i < PagedGroup*hd; i += pagedWarps * 32 {
		g, k, j := udiv(i, hd), udiv(urem(i, hd), tpt), urem(i, tpt)
		x := float32(0)
		if i < ng*hd {
			x = c.load(q[qb+g*hd+udiv(k, 4)*(hd/2)+4*j+urem(k, 4)]) * scaleLog2
		}
		qs[i] = x
	}
	if tid < PagedGroup {
		ms[tid], ls[tid] = negInf(), 0
	}
	t.Sync()

	slots := 32 / tpt // tokens per warp step
	sl, j := udiv(lane, tpt), urem(lane, tpt)
	dpl := hd / 32    // dims per lane in the P·V phase
	dq := min(dpl, 4) // a lane's dims are dq·lane + e%4 + 128·(e/4), e < dpl
	var acc [PagedGroup][8]float32
	for c0 := t0; c0 < t1; c0 += PagedChunk {
		// 1. scores
		for step := 0; step < 16/slots; step++ {
			ti := warp*16 + step*slots + sl // token within the chunk
			tok := c0 + ti
			var kf [8]float32
			if tok < t1 {
				page := int(blockTable[seq*maxBlocks+tok>>bsShift])
				base := (((page<<bsShift)+tok&(1<<bsShift-1))*kvHeads + kvh) * hd
				ka := gpu.Load4(kc, base+4*j)
				kb := gpu.Load4(kc, base+hd/2+4*j)
				//kern:unroll
				for e := 0; e < 4; e++ {
					kf[e], kf[4+e] = c.load(ka[e]), c.load(kb[e])
				}
			}
			for g := 0; g < ng; g++ {
				d := float32(0)
				//kern:unroll
				for e := 0; e < 4; e++ {
					d = gpu.FMA(kf[e], qs[g*hd+e*tpt+j], d)
					d = gpu.FMA(kf[4+e], qs[g*hd+(4+e)*tpt+j], d)
				}
				//kern:unroll
				for off := 16; off > 0; off /= 2 {
					if off < tpt {
						d += gpu.ShflXor(t, d, off)
					}
				}
				if j == 0 {
					if tok >= t1 {
						d = negInf()
					}
					lg[g*PagedChunk+ti] = d
				}
			}
		}
		t.Sync()

		// 2. online softmax over the chunk, heads warp and warp+4
		//kern:unroll
		for gg := 0; gg < PagedGroup/pagedWarps; gg++ {
			g := warp + pagedWarps*gg
			if g >= ng {
				break
			}
			a, b := lg[g*PagedChunk+lane], lg[g*PagedChunk+32+lane]
			mold := ms[g]
			mnew := gpu.Max(mold, gpu.WarpMax(t, gpu.Max(a, b)))
			msub := mnew
			if mnew == negInf() {
				msub = 0
			}
			pa, pb := gpu.Exp2(a-msub), gpu.Exp2(b-msub)
			lg[g*PagedChunk+lane], lg[g*PagedChunk+32+lane] = pa, pb
			sum := gpu.WarpSum(t, pa+pb)
			if lane == 0 {
				alpha := gpu.Exp2(mold - msub)
				ms[g], ls[g], al[g] = mnew, ls[g]*alpha+sum, alpha
			}
		}
		t.Sync()

		// 3. O += P·V
		//kern:unroll
		for g := 0; g < PagedGroup; g++ {
			a := al[g]
			//kern:unroll
			for e := 0; e < 8; e++ {
				if e < dpl {
					acc[g][e] *= a
				}
			}
		}
		for i := 0; i < PagedChunk/pagedWarps; i++ {
			ti := warp + pagedWarps*i
			tok := c0 + ti
			if tok < t1 {
				page := int(blockTable[seq*maxBlocks+tok>>bsShift])
				base := (((page<<bsShift)+tok&(1<<bsShift-1))*kvHeads+kvh)*hd + dq*lane
				var vf [8]float32
				if hd >= 128 {
					v4 := gpu.Load4(vc, base)
					vf[0], vf[1], vf[2], vf[3] = c.load(v4[0]), c.load(v4[1]), c.load(v4[2]), c.load(v4[3])
					if hd == 256 {
						v4 = gpu.Load4(vc, base+128)
						vf[4], vf[5], vf[6], vf[7] = c.load(v4[0]), c.load(v4[1]), c.load(v4[2]), c.load(v4[3])
					}
				} else {
					v2 := gpu.Load2(vc, base)
					vf[0], vf[1] = c.load(v2[0]), c.load(v2[1])
				}
				//kern:unroll
				for g := 0; g < PagedGroup; g++ {
					if g >= ng {
						break
					}
					p := lg[g*PagedChunk+ti]
					//kern:unroll
					for e := 0; e < 8; e++ {
						if e < dpl {
							acc[g][e] = gpu.FMA(p, vf[e], acc[g][e])
						}
					}
				}
			}
		}
		t.Sync()
	}

	// The warps' partial sums meet in shared memory.
	//kern:unroll
	for g := 0; g < PagedGroup; g++ {
		//kern:unroll
		for e := 0; e < 8; e++ {
			if e < dpl {
				red[(warp*PagedGroup+g)*hd+32*e+lane] = acc[g][e] // dim dq·lane + e%4 + 128·(e/4)
			}
		}
	}
	t.Sync()
	for i := tid; i < ng*hd; i += pagedWarps * 32 {
		g, r := udiv(i, hd), urem(i, hd)
		e := udiv(r, 32)
		d := dq*urem(r, 32) + e&3 + 128*(e>>2)
		s := red[g*hd+r] + red[(PagedGroup+g)*hd+r] + red[(2*PagedGroup+g)*hd+r] + red[(3*PagedGroup+g)*hd+r]
		l := ls[g]
		o := float32(0)
		if l > 0 {
			o = s / l
		}
		h := kvh*group + g0 + g
		if nsplit == 1 {
			out[(seq*heads+h)*hd+d] = c.store(o)
		} else {
			pi := (seq*heads+h)*nsplit + split
			po[pi*hd+d] = o
			if d == 0 {
				pml[2*pi], pml[2*pi+1] = ms[g], l
			}
		}
	}
}

// A codec is a 16-bit element type's conversions to and from float32.
type codec[T any] interface {
	load(T) float32
	store(float32) T
}

type f16m struct{}

func (f16m) load(x gpu.Half) float32  { return x.Float32() }
func (f16m) store(v float32) gpu.Half { return gpu.ToHalf(v) }

type bf16m struct{}

func (bf16m) load(x gpu.BFloat16) float32  { return x.Float32() }
func (bf16m) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }

// udiv and urem divide non-negative ints below 2^32 in 32 bits: Go's
// int division is 64-bit and signed, which ptxas compiles to a subroutine
// call even for a constant power-of-two divisor.
func udiv(a, b int) int { return int(uint32(a) / uint32(b)) }
func urem(a, b int) int { return int(uint32(a) % uint32(b)) }

func negInf() float32 { return math.Float32frombits(0xff800000) }
