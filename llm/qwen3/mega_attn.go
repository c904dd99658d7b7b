package qwen3

// The persistent decode layer's attention (mega.go), each sequence
// decoding one token at position n-1 (its own n), the keys in the paged
// cache (ops.PagedAttention's layout: kCache [pages, pageSize, kvHeads,
// hd]).
//
// Work items are (sequence b, KV head g, split s) for s < nsplit, KV head
// g's on blocks g·nsplit … g·nsplit+nsplit-1 (megaItem): split s holds keys
// [s·L, min(n, (s+1)·L)), L = megaSplitLen(n, nsplit); splits past the
// end are empty. An item's block first prepares what the unfused path's
// qkvPrep does, for its own use: the G = nh/nkv query heads of its group
// from the projection's float32 output (QK-norm, RoPE, rounded to T as
// the cache holds keys), and, in the item of the last split, which holds
// position n-1, the new key and value of head g, written to the cache
// slot before any key is read (a block barrier orders the block's global
// writes before its reads). No other item reads position n-1, so no grid
// barrier is needed between the preparation and attention.
//
// The split's keys go in chunks of megaChunk: each warp scores keys w,
// w+16, … of the chunk against the group's queries (lane l holds
// elements 4l … 4l+3 of a row, one 8-byte load: a warp reads a row's
// bytes in one coalesced access), warp h updates head h's running maximum and sum,
// then each warp adds its keys' values, weighted, into per-lane
// accumulators, rescaled by the change of maximum first. At the end the
// warps' accumulators are summed in warp order in shared memory, and
// the item writes its normalised output and (max, sum) to the scratch.
// The last used split of head g to arrive (a counter per sequence and KV
// head; empty splits neither work nor arrive) combines the used splits in
// split order, as ops.PagedAttention does:
// out = Σ ℓ_s·e^(m_s-M)·o_s / Σ ℓ_s·e^(m_s-M), M the largest m_s.

import "github.com/gokern/kern/gpu"

// megaSplitLen is the keys per split of a sequence of n: ⌈n/nsplit⌉
// rounded up to the chunk, so that a split's chunks are whole but for
// the sequence's last.
func megaSplitLen(n, nsplit int) int {
	p := (n + nsplit - 1) / nsplit
	return (p + megaChunk - 1) / megaChunk * megaChunk
}

// megaSplits is a sequence of n's split length and how many of its
// splits hold keys: at most nsplit, since L ≥ ⌈n/nsplit⌉.
func megaSplits(n, nsplit int) (L, used int) {
	L = megaSplitLen(n, nsplit)
	return L, (n + L - 1) / L
}

// megaItem is a KV head's attention item j: its sequence and split, of S
// sequences, split-major, so that a round of the grid takes the first
// split of every sequence before any takes a second. At a short context
// only the first splits hold keys (a split is at least a chunk): 8
// sequences' work is then one round over the grid, not 8 rounds of the
// same blocks. At one sequence item j is split j. Which block takes an
// item changes no result.
func megaItem(j, S int) (b, s int) {
	return j % S, j / S
}

// megaAttention is the layer's attention phase: a [S, nh·d] T, the
// heads' outputs. part holds S·nh·nsplit·d outputs then S·nh·nsplit
// (max, sum) pairs; cnt's first S·nkv words are the (sequence, KV head)
// arrival counters (zero on entry, left zero). qs, sc, ps, ml and flag are the block's shared
// memory: the group's queries [megaMaxG·megaMaxD], scores and weights
// [megaMaxG·megaChunk], per head the rescale factor (ml[h]) and the final
// max and sum (ml[8+2h], ml[9+2h]).
func megaAttention[T gpu.Elem, C mcodec[T]](cd C, t gpu.Thread, a, kCache, vCache []T, qkv, qNorm, kNorm, part, red, qs, sc, ps, ml []float32, cnt, flag, meta, table []int32, S, nh, nkv, d, hd, pageSize, nsplit int, norm bool, eps, scale float32, ratio float64) {
	// The kernel is nobounds: what the device reads as indices is checked
	// per item (a failure is a *kern.DeviceError), the shapes on the host
	// (megaLaunch).
	//
	// Column c = g·nsplit + i of the nkv·nsplit columns is KV head g's
	// items i, i + nsplit, …, split-major (megaItem): past the most splits
	// any sequence uses, every item is empty, and the column ends there.
	// Each sequence's first split is visited whatever its length, so that
	// its checks below run. Block c takes column c (and c + grid, … on a
	// grid of fewer blocks than KV heads).
	used1 := int(meta[3*megaMaxS]) // megaAttnPrefetch
	for c := t.BlockIdx().X; c < nkv*nsplit; c += t.GridDim().X {
		megaColumn(cd, t, a, kCache, vCache, qkv, qNorm, kNorm, part, red, qs, sc, ps, ml, cnt, flag, meta, table, c/nsplit, c%nsplit, used1, S, nh, nkv, d, hd, pageSize, nsplit, norm, eps, scale, ratio)
	}
}

// megaColumn is KV head g's attention items first, first + nsplit, …
// below used1·S (megaAttention).
func megaColumn[T gpu.Elem, C mcodec[T]](cd C, t gpu.Thread, a, kCache, vCache []T, qkv, qNorm, kNorm, part, red, qs, sc, ps, ml []float32, cnt, flag, meta, table []int32, g, first, used1, S, nh, nkv, d, hd, pageSize, nsplit int, norm bool, eps, scale float32, ratio float64) {
	warp, lane, tid := t.Warp(), t.Lane(), t.ThreadIdx().X
	pages := len(kCache) / (pageSize * nkv * hd)
	P := len(table) / S // a sequence's block table row
	G := nh / nkv
	half := d / 2
	ml0 := S * nh * nsplit * d // part's (max, sum) pairs
	for j := first; j < used1*S; j += nsplit {
		b, s := megaItem(j, S)
		// Read at the layer's start (megaAttnPrefetch): an item, empty
		// or not, starts without a round trip for them.
		n, at, slot := int(meta[3*b]), int(meta[3*b+1]), int(meta[3*b+2])
		if n < 1 || n > P*pageSize {
			panic("qwen3: persistent decode: a sequence length is not within its block table")
		}
		if slot >= pages*pageSize {
			panic("qwen3: persistent decode: a new token's cache slot is not in the cache")
		}
		L, used := megaSplits(n, nsplit)
		tab := table[b*P : b*P+P]
		if s >= used {
			// An empty split (past the sequence's end): no work, and no
			// arrival, since the counter counts the used splits.
			continue
		}
		row0 := b * (nh + 2*nkv) // the sequence's first head vector in qkv
		// The group's queries, and in the last split the new key and value.
		if warp < G {
			x1, x2 := headPrep(t, qkv, qNorm, row0+g*G+warp, d, int32(at), false, norm, eps, ratio)
			//kern:unroll
			for p := 0; p < qkvPairs; p++ {
				if i := lane + 32*p; i < half {
					qs[warp*megaMaxD+i] = cd.load(cd.store(x1[p]))
					qs[warp*megaMaxD+i+half] = cd.load(cd.store(x2[p]))
				}
			}
		} else if s == used-1 && warp < G+2 && slot >= 0 {
			isV := warp == G+1
			hv, cache := nh+g, kCache // the head vector in the sequence's qkv row
			if isV {
				hv, cache = nh+nkv+g, vCache
			}
			x1, x2 := headPrep(t, qkv, kNorm, row0+hv, d, int32(at), isV, norm, eps, ratio)
			dst := (slot*nkv + g) * hd
			//kern:unroll
			for p := 0; p < qkvPairs; p++ {
				if i := lane + 32*p; i < half {
					cache[dst+i], cache[dst+i+half] = cd.store(x1[p]), cd.store(x2[p])
				}
			}
			for i := d + lane; i < hd; i += 32 {
				cache[dst+i] = cd.store(0)
			}
		}
		// The split's block table entries are checked while the first
		// warps prepare the heads (their loads are in flight together:
		// the check needs none of it, and no key is read before it),
		// by the last warps first, which prepare nothing.
		bad := 0
		for e := s*L/pageSize + (megaThreads - 1 - tid); e <= (min(n, s*L+L)-1)/pageSize; e += megaThreads {
			if uint(tab[e]) >= uint(pages) {
				bad = 1
			}
		}
		if gpu.BlockMax(t, bad) != 0 { // block-uniform: the barriers below stay so
			panic("qwen3: persistent decode: a block table entry is not a page of the cache")
		}
		t.Sync() // the queries, and the new key and value, before any score

		// Each lane's elements of the group's queries, in registers:
		// lane l holds elements 4l … 4l+3 (one 16-byte shared load).
		mine := 4*lane < d
		var qr, acc [megaMaxG][megaLaneElems]float32
		//kern:unroll
		for h := 0; h < megaMaxG; h++ {
			if h < G && mine {
				qr[h] = gpu.Load4(qs, h*megaMaxD+4*lane)
			}
		}
		m, l := float32(-3.0e38), float32(0) // warp h < G's running max and sum of head h
		s0, s1 := s*L, min(n, s*L+L)
		for j0 := s0; j0 < s1; j0 += megaChunk {
			// Warp w takes keys j0+w+16e, e < megaKeys: their page
			// numbers, then their K and V rows, every load of the
			// chunk in flight before the first product.
			var row [megaKeys]int
			//kern:unroll
			for e := 0; e < megaKeys; e++ {
				if key := j0 + warp + e*megaWarps; key < s1 {
					row[e] = ((int(tab[key/pageSize])*pageSize+key%pageSize)*nkv + g) * hd
				}
			}
			// A lane's four elements of a row are one 8-byte load.
			var kv, vv [megaKeys][megaLaneElems]float32
			//kern:unroll
			for e := 0; e < megaKeys; e++ {
				if j0+warp+e*megaWarps < s1 && mine {
					k4, v4 := gpu.Load4(kCache, row[e]+4*lane), gpu.Load4(vCache, row[e]+4*lane)
					//kern:unroll
					for p := 0; p < megaLaneElems; p++ {
						kv[e][p], vv[e][p] = cd.load(k4[p]), cd.load(v4[p])
					}
				}
			}
			// Scores.
			//kern:unroll
			for e := 0; e < megaKeys; e++ {
				jj := warp + e*megaWarps
				var dot [megaMaxG]float32
				//kern:unroll
				for p := 0; p < megaLaneElems; p++ {
					//kern:unroll
					for h := 0; h < megaMaxG; h++ {
						if h < G {
							dot[h] = gpu.FMA(qr[h][p], kv[e][p], dot[h]) // zero past d and past s1
						}
					}
				}
				//kern:unroll
				for h := 0; h < megaMaxG; h++ {
					if h < G {
						v := gpu.WarpSum(t, dot[h]) * scale
						if j0+jj >= s1 {
							v = -3.0e38
						}
						if lane == 0 {
							sc[h*megaChunk+jj] = v
						}
					}
				}
			}
			t.Sync()
			// Softmax: warp h updates head h.
			if warp < G {
				v0, v1 := sc[warp*megaChunk+lane], sc[warp*megaChunk+lane+32]
				mn := gpu.Max(m, gpu.WarpMax(t, gpu.Max(v0, v1)))
				p0, p1 := gpu.Exp(v0-mn), gpu.Exp(v1-mn)
				if j0+lane >= s1 {
					p0 = 0
				}
				if j0+lane+32 >= s1 {
					p1 = 0
				}
				alpha := gpu.Exp(m - mn)
				l = l*alpha + gpu.WarpSum(t, p0+p1)
				m = mn
				ps[warp*megaChunk+lane], ps[warp*megaChunk+lane+32] = p0, p1
				if lane == 0 {
					ml[warp] = alpha
				}
			}
			t.Sync()
			// P·V: warp w adds keys j0+w+16e into lane columns lane+32p.
			//kern:unroll
			for h := 0; h < megaMaxG; h++ {
				if h < G {
					al := ml[h]
					//kern:unroll
					for p := 0; p < megaLaneElems; p++ {
						acc[h][p] *= al
					}
				}
			}
			//kern:unroll
			for e := 0; e < megaKeys; e++ {
				jj := warp + e*megaWarps
				//kern:unroll
				for p := 0; p < megaLaneElems; p++ {
					//kern:unroll
					for h := 0; h < megaMaxG; h++ {
						if h < G {
							acc[h][p] = gpu.FMA(ps[h*megaChunk+jj], vv[e][p], acc[h][p]) // zero past d; p = 0 past s1
						}
					}
				}
			}
			t.Sync() // sc, ps and ml are rewritten by the next chunk
		}
		if warp < G && lane == 0 {
			ml[8+2*warp], ml[9+2*warp] = m, l
		}
		// The warps' accumulators, head by head, summed in warp order.
		//kern:unroll
		for h := 0; h < megaMaxG; h++ {
			if h < G {
				if mine {
					gpu.Store4(red, warp*megaMaxD+4*lane, acc[h])
				}
				t.Sync()
				if tid < d {
					o := float32(0)
					//kern:unroll
					for w2 := 0; w2 < megaWarps; w2++ {
						o += red[w2*megaMaxD+tid]
					}
					hs := (b*nh+g*G+h)*nsplit + s
					part[hs*d+tid] = o / ml[9+2*h]
					if tid == 0 {
						part[ml0+2*hs], part[ml0+2*hs+1] = ml[8+2*h], ml[9+2*h]
					}
				}
				t.Sync()
			}
		}
		// Every used split arrives; the last combines.
		gpu.ThreadFence(t)
		t.Sync()
		if tid == 0 {
			last := int32(0)
			if gpu.AtomicAdd(&cnt[b*nkv+g], 1) == int32(used-1) {
				last, cnt[b*nkv+g] = 1, 0
			}
			flag[0] = last
		}
		t.Sync()
		if flag[0] == 0 {
			continue
		}
		gpu.ThreadFence(t)
		for e := tid; e < G*d; e += megaThreads {
			h := b*nh + g*G + e/d // the sequence's query head, counted over the step
			i := e % d
			// The splits' partials megaCombine at a time, every load of
			// a batch before its first use: the first batch's maxima,
			// sums and outputs in one round trip, later batches' maxima
			// and then the rest. The sums run in split order.
			var m0, l0, o0 [megaCombine]float32
			//kern:unroll
			for u := range megaCombine {
				if u < used {
					hs := h*nsplit + u
					m0[u], l0[u], o0[u] = part[ml0+2*hs], part[ml0+2*hs+1], part[hs*d+i]
				}
			}
			mx := float32(-3.0e38)
			//kern:unroll
			for u := range megaCombine {
				if u < used {
					mx = gpu.Max(mx, m0[u])
				}
			}
			for s0 := megaCombine; s0 < used; s0 += megaCombine {
				var ms [megaCombine]float32
				//kern:unroll
				for u := range megaCombine {
					if s0+u < used {
						ms[u] = part[ml0+2*(h*nsplit+s0+u)]
					}
				}
				//kern:unroll
				for u := range megaCombine {
					if s0+u < used {
						mx = gpu.Max(mx, ms[u])
					}
				}
			}
			num, den := float32(0), float32(0)
			//kern:unroll
			for u := range megaCombine {
				if u < used {
					f := l0[u] * gpu.Exp(m0[u]-mx)
					num = gpu.FMA(f, o0[u], num)
					den += f
				}
			}
			for s0 := megaCombine; s0 < used; s0 += megaCombine {
				var ms, ls, os [megaCombine]float32
				//kern:unroll
				for u := range megaCombine {
					if hs := h*nsplit + s0 + u; s0+u < used {
						ms[u], ls[u], os[u] = part[ml0+2*hs], part[ml0+2*hs+1], part[hs*d+i]
					}
				}
				//kern:unroll
				for u := range megaCombine {
					if s0+u < used {
						f := ls[u] * gpu.Exp(ms[u]-mx)
						num = gpu.FMA(f, os[u], num)
						den += f
					}
				}
			}
			a[h*d+i] = cd.store(num / den)
		}
		t.Sync() // flag is rewritten by the next item
	}
}

// megaAttnPrefetch asks L2 for the K and V rows of the block's first
// attention item (megaAttention's numbering), at the layer's start, two
// phases before attention reads them: the cache is the previous steps' (the new
// position's row, written in the attention phase, is left out), and the
// block table is the host's, copied before the launch. Entries are
// clamped to the cache like any prefetch, so a bad one costs nothing
// here; megaAttention reports it. Every sequence's length, position and
// slot go to meta (3 words a sequence), and the most splits any sequence
// uses to meta[3·megaMaxS], for megaAttention, which then starts each
// item on its loads of the heads, and ends after the last used split,
// without a round trip or a division. Their loads are issued first and
// the shared stores come last, so that nothing waits on them; the block's
// last thread, which has no share of a norm of up to 2048 elements,
// counts the splits.
func megaAttnPrefetch[T gpu.Elem](t gpu.Thread, kCache, vCache []T, meta, pos, slots, table, seqLens []int32, S, nkv, d, hd, pageSize, nsplit int) {
	tid := t.ThreadIdx().X
	last := tid == megaThreads-1
	var mn, mp, ms int32
	if tid < S {
		mn, mp, ms = seqLens[tid], pos[tid], slots[tid]
	}
	var ns [megaMaxS]int32
	if last {
		//kern:unroll
		for b := range megaMaxS {
			if b < S {
				ns[b] = seqLens[b]
			}
		}
	}
	megaPrefetchKV(t, kCache, vCache, table, seqLens, S, nkv, d, hd, pageSize, nsplit)
	if tid < S {
		meta[3*tid], meta[3*tid+1], meta[3*tid+2] = mn, mp, ms
	}
	if last {
		used1 := 1
		//kern:unroll
		for b := range megaMaxS {
			if n := int(ns[b]); b < S && n >= 1 {
				_, used := megaSplits(n, nsplit)
				used1 = max(used1, used)
			}
		}
		meta[3*megaMaxS] = int32(used1)
	}
}

// megaPrefetchKV is megaAttnPrefetch's prefetch of the block's first
// item's keys and values.
func megaPrefetchKV[T gpu.Elem](t gpu.Thread, kCache, vCache []T, table, seqLens []int32, S, nkv, d, hd, pageSize, nsplit int) {
	c := t.BlockIdx().X // the block's first column (megaAttention)
	if c >= nkv*nsplit {
		return
	}
	g := c / nsplit
	b, s := megaItem(c%nsplit, S)
	n, P := int(seqLens[b]), len(table)/S
	if n < 1 || n > P*pageSize {
		return
	}
	L := megaSplitLen(n, nsplit)
	s0, s1 := s*L, min(n-1, s*L+L)
	lines := int32((d + 63) >> 6) // 128-byte lines of a row's d elements
	for e := int32(t.ThreadIdx().X); e < int32(max(0, s1-s0))*lines; e += megaThreads {
		key := s0 + int(e/lines)
		row := ((int(table[b*P+key/pageSize])*pageSize+key%pageSize)*nkv+g)*hd + int(e%lines)*64
		gpu.PrefetchL2(kCache, row)
		gpu.PrefetchL2(vCache, row)
	}
}
