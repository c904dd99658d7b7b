package decodemma

// The split-K reduce of paged decode attention: in the attention kernel
// itself for v3 (pagedFinish: the last of a sequence's splits, per head
// group, to finish combines them), and as a kernel of its own
// (PagedReduce*) after v1 (ops/internal/decodek) and v2. Both combine the
// splits in split order with the same arithmetic, so the result does not
// depend on which block finishes last, nor on the kernel that reduces.

import "github.com/gokern/kern/gpu"

//kern:kernel block=128 nobounds pdl
func PagedReduceF16(t gpu.Thread, out []gpu.Half, po, pml []float32, seqLens []int32, heads, hd, nsplit, partition int) {
	pagedReduce(f16m{}, t, out, po, pml, seqLens, heads, hd, nsplit, partition)
}

//kern:kernel block=128 nobounds pdl
func PagedReduceBF16(t gpu.Thread, out []gpu.BFloat16, po, pml []float32, seqLens []int32, heads, hd, nsplit, partition int) {
	pagedReduce(bf16m{}, t, out, po, pml, seqLens, heads, hd, nsplit, partition)
}

// pagedReduce combines the splits of one (sequence, head), block
// (head, seq), a thread per dim: with M the largest split maximum, split s
// weighs w_s = ℓ_s·2^(m_s - M), and out = Σ w_s·o_s / Σ w_s, summed in
// split order. Splits past the sequence's end (they saw no token) are
// skipped. (v1 and v2, which this kernel follows, cut a sequence into
// splits of partition tokens; v3's strided kernels spread it, SplitLen.)
//
// A decode step waits on this kernel's chain of memory round trips, so
// the splits' partials are loaded reduceBatch at a time, every load of a
// batch before the first use: the first batch's maxima, sums and outputs
// together (one round trip after the sequence length for up to
// reduceBatch splits, where a loop over the splits waits for each
// split's loads twice), later batches' maxima, then their sums and
// outputs.
func pagedReduce[T gpu.Elem, C codec[T]](c C, t gpu.Thread, out []T, po, pml []float32, seqLens []int32, heads, hd, nsplit, partition int) {
	h, seq := t.BlockIdx().X, t.BlockIdx().Y
	used := min(nsplit, int(uint32(int(seqLens[seq])+partition-1)/uint32(partition)))
	pb := (seq*heads + h) * nsplit
	for d := t.ThreadIdx().X; d < hd; d += t.BlockDim().X { // once for hd ≤ 128
		reduceDims(c, out, po, pml, (seq*heads+h)*hd+d, pb, used, hd, d, 1)
	}
}

// splitMax is the largest of a head's split maxima (0 when none is
// finite): m0 holds the first reduceBatch splits' (-inf past used), the
// later ones are loaded reduceBatch at a time.
func splitMax(pml []float32, m0 [reduceBatch]float32, pb, used int) float32 {
	m := negInf()
	//kern:unroll
	for u := 0; u < reduceBatch; u++ {
		m = gpu.Max(m, m0[u])
	}
	for s0 := reduceBatch; s0 < used; s0 += reduceBatch {
		var ms [reduceBatch]float32
		//kern:unroll
		for u := 0; u < reduceBatch; u++ {
			ms[u] = negInf()
			if s := s0 + u; s < used {
				ms[u] = pml[2*(pb+s)]
			}
		}
		//kern:unroll
		for u := 0; u < reduceBatch; u++ {
			m = gpu.Max(m, ms[u])
		}
	}
	if m == negInf() {
		m = 0
	}
	return m
}

// reduceBatch is the splits pagedReduce loads at once.
const reduceBatch = 8

// SplitQuantum is the granularity of split lengths: v1's 64-token chunk
// (decodek.PagedChunk), v2 and v3's round of four 16-token warp steps.
const SplitQuantum = 64

// SplitLen is the tokens per split of a sequence of n tokens under
// split-K with nsplit splits of at most partition tokens (a multiple of
// SplitQuantum): n spread over all nsplit splits, in multiples of
// SplitQuantum (at least one), so that a short sequence takes as many
// blocks as a long one would rather than a few long splits. It depends on
// n, nsplit and partition alone, so a sequence's result does not depend
// on the batch around it. With nsplit 1 the one split is partition long.
func SplitLen(n, nsplit, partition int) int {
	if nsplit <= 1 {
		return partition
	}
	p := udiv(n+nsplit-1, nsplit)
	return max(SplitQuantum, (p+SplitQuantum-1)&^(SplitQuantum-1))
}

// pagedFinish is the reduce of a split-K launch of paged, run by the last
// block of the sequence's (and head group's) to finish; block (bx, hy,
// seq) has written the partials of its arrive splits for heads h0 …
// h0+ng-1. used is the splits that hold tokens of the sequence (at least
// 1: an empty sequence's split 0 stands for it, and its output is 0). The
// hand-off is gemv3's (ops/internal/gemv3): a barrier orders the block's
// partial stores before thread 0's fence and arrival (a release at gpu
// scope); the arrival that brings the count to used, then a fence,
// acquires every other split's partials, and the second barrier orders
// this block's loads after it. The last block resets the counter for the
// next launch. flag is a shared word the block may overwrite.
func pagedFinish[T gpu.Elem, C codec[T]](c C, t gpu.Thread, out []T, po, pml []float32, cnt []uint32, flag []float32, seq, hy, heads, hd, h0, ng, nsplit, arrive, used int) {
	tid := t.ThreadIdx().X
	ci := seq*t.GridDim().Y + hy
	t.Sync()
	if tid == 0 {
		gpu.ThreadFence(t)
		arrived := float32(0)
		if gpu.AtomicAdd(&cnt[ci], uint32(arrive)) == uint32(used-arrive) {
			gpu.AtomicExch(&cnt[ci], 0) // ready for the next launch
			arrived = 1
		}
		gpu.ThreadFence(t)
		flag[0] = arrived
	}
	t.Sync()
	if flag[0] == 0 {
		return
	}
	// Thread tid combines head tid%8 at dims tid/8 + 16j (a warp reads 4
	// whole rows of each split's partials), finishDims dims at a time.
	g := tid & (Group - 1)
	if g >= ng {
		return
	}
	h := h0 + g
	nd := Group * hd / (warps * 32)
	for j0 := 0; j0 < nd; j0 += finishDims {
		d0 := tid>>3 + 16*j0
		reduceDims(c, out, po, pml, (seq*heads+h)*hd+d0, (seq*heads+h)*nsplit, used, hd, d0, min(finishDims, nd-j0))
	}
}

// finishDims is how many of its dims a thread of pagedFinish combines at
// once.
const finishDims = 4

// reduceDims combines the splits of nd ≤ finishDims dims of one head,
// dim d0 + 16j written to out[at + 16j]: the head's maxima and sums are
// loaded once for all of them, and every load of a batch goes out before
// the first use, so nd dims cost the round trips of one. pagedReduce
// takes one dim a thread, pagedFinish four; each dim's arithmetic is the
// same either way, so the bits do not depend on which kernel reduces.
func reduceDims[T gpu.Elem, C codec[T]](c C, out []T, po, pml []float32, at, pb, used, hd, d0, nd int) {
	var m0, l0 [reduceBatch]float32
	var o0 [finishDims][reduceBatch]float32
	//kern:unroll
	for u := 0; u < reduceBatch; u++ {
		m0[u] = negInf()
		if u < used {
			m0[u], l0[u] = pml[2*(pb+u)], pml[2*(pb+u)+1]
			//kern:unroll
			for j := 0; j < finishDims; j++ {
				if j < nd {
					o0[j][u] = po[(pb+u)*hd+d0+16*j]
				}
			}
		}
	}
	m := splitMax(pml, m0, pb, used)
	var num [finishDims]float32
	den := float32(0)
	//kern:unroll
	for u := 0; u < reduceBatch; u++ {
		if u < used {
			w := l0[u] * gpu.Exp2(m0[u]-m)
			//kern:unroll
			for j := 0; j < finishDims; j++ {
				num[j] = gpu.FMA(w, o0[j][u], num[j])
			}
			den += w
		}
	}
	for s0 := reduceBatch; s0 < used; s0 += reduceBatch {
		var ms, ls [reduceBatch]float32
		var os [finishDims][reduceBatch]float32
		//kern:unroll
		for u := 0; u < reduceBatch; u++ {
			if s := s0 + u; s < used {
				ms[u], ls[u] = pml[2*(pb+s)], pml[2*(pb+s)+1]
				//kern:unroll
				for j := 0; j < finishDims; j++ {
					if j < nd {
						os[j][u] = po[(pb+s)*hd+d0+16*j]
					}
				}
			}
		}
		//kern:unroll
		for u := 0; u < reduceBatch; u++ {
			if s0+u < used {
				w := ls[u] * gpu.Exp2(ms[u]-m)
				//kern:unroll
				for j := 0; j < finishDims; j++ {
					num[j] = gpu.FMA(w, os[j][u], num[j])
				}
				den += w
			}
		}
	}
	//kern:unroll
	for j := 0; j < finishDims; j++ {
		if j < nd {
			o := float32(0)
			if den > 0 {
				o = num[j] / den
			}
			out[at+16*j] = c.store(o)
		}
	}
}
