package qwen3

// The persistent decode layer: a decode step of up to 8 sequences runs
// each transformer layer as one cooperative launch instead of six kernels
// (the q/k/v GEMV with its norm, qkvPrep, PagedAttention, o_proj,
// gate/up with its norm, down_proj). At batch 1 a layer moves 31 MB
// (Qwen3-0.6B) to 202 MB (4B) of weights, 9–60 µs at an H100's DRAM
// peak, while each of the six kernels costs 4–15 µs however little it
// moves (docs/performance-gpu.md): launch, ramp, one dependent round trip
// to memory after another, tail. Here the grid is what the GPU holds at
// once, every block stays for the whole layer, and the phases meet at
// gpu.GridSync, whose cost is one round of atomics rather than a launch
// and a ramp:
//
//	norm(x)·Wqkv → qkv                  every block normalises x itself
//	  ─ grid barrier ─
//	attention (QK-norm, RoPE and the cache write fused in: mega_attn.go) → a
//	  ─ grid barrier ─
//	x2 = x + a·Woᵀ
//	  ─ grid barrier ─
//	act = SwiGLU(norm(x2)·Wgate/upᵀ)
//	  ─ grid barrier ─
//	x = x2 + act·Wdownᵀ
//
// The projections are mega_gemv.go's tensor-core GEMV over the whole
// grid. The arithmetic is the ops path's (the norm, RoPE, the roundings
// to T, SwiGLU), the sums' order is not, so logits agree with it to
// float32 rounding, not bit for bit (mega_test.go). Nothing in it
// depends on how many sequences a step has (a sequence is a column of
// the mma; the plan and a sequence's attention splits are fixed), so a
// sequence's logits are the same bits alone or in any step of up to
// megaMaxSeqs. Used for decode steps when UsePersistentDecode turned it
// on, with at most megaMaxSeqs sequences (8, fewer where the inputs'
// shared copy does not fit).

import (
	"errors"
	"fmt"
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops"
)

const (
	megaThreads  = 512
	megaWarps    = megaThreads / 32
	megaUnroll   = 4     // 32-column chunks a warp loads before its products
	megaMaxKs    = 8     // k-slices of a projection at most (planMega)
	megaCombine  = 8     // attention splits whose partials a thread loads at once
	megaMaxK     = 12288 // the longest projection input: Qwen3 up to 8B
	megaMaxS     = 8     // sequences a step: the mma's N
	megaNormRegs = 2     // chunks of 4 elements a thread of megaNorm keeps in registers
	// megaSharedBytes bounds the inputs' shared copy (dynamic shared
	// memory, 16-bit): with the static arrays, within the 227 KiB an
	// sm_90 block may have (newMegaState takes fewer sequences where the
	// device holds less). Qwen3-8B: 8 sequences of 12320 elements.
	megaSharedBytes = 200 * 1024
	megaMaxD        = 128                   // the largest head dim
	megaMaxG        = 4                     // the most query heads per KV head (Qwen3 up to 8B)
	megaLaneElems   = megaMaxD / 32         // of a key or value row, lane l's: 4l … 4l+3
	megaChunk       = 64                    // keys scored between two softmax updates
	megaKeys        = megaChunk / megaWarps // of a chunk, each warp's
	// megaRed is the word stride of a sequence's 16 row sums in the
	// GEMV's shared warp sums: 20 ≡ 4 (mod 16) makes both the mma
	// lanes' stores and the finishing threads' reads conflict-free.
	megaRed = 20
	// megaPrefetchUnits is how many of its next projection's units a block
	// asks L2 for before a grid barrier: 2 units of 0.6B's q/k/v are its
	// whole share, 40–80 KB; the grid's total, 5–10 MB, is what DRAM
	// delivers in the 2–3 µs a barrier and a phase's start take, and a
	// fifth of an H100's L2.
	megaPrefetchUnits = 2
	// megaHostGrid is the grid on the emulator and in native mode.
	megaHostGrid = 8
)

//kern:kernel block=512 minblocks=1 nobounds
func megaLayerBF16(t gpu.Thread, x, x2, qkv []float32, a, act, kCache, vCache, wqkv, wo, wgu, wd, wnext []gpu.BFloat16, inNorm, postNorm, qNorm, kNorm, part []float32, cnt, pos, slots, table, seqLens []int32, prof []int64, S, H, nh, nkv, d, hd, I, kp, pageSize, nsplit, ks1, ks2, ks3, ks4, pairs, profAt int, next, norm bool, eps, scale float32, ratio float64) {
	megaLayer(bf16w{}, t, x, x2, qkv, a, act, kCache, vCache, wqkv, wo, wgu, wd, wnext, inNorm, postNorm, qNorm, kNorm, part, cnt, pos, slots, table, seqLens, prof, S, H, nh, nkv, d, hd, I, kp, pageSize, nsplit, ks1, ks2, ks3, ks4, pairs, profAt, next, norm, eps, scale, ratio)
}

//kern:kernel block=512 minblocks=1 nobounds
func megaLayerF16(t gpu.Thread, x, x2, qkv []float32, a, act, kCache, vCache, wqkv, wo, wgu, wd, wnext []gpu.Half, inNorm, postNorm, qNorm, kNorm, part []float32, cnt, pos, slots, table, seqLens []int32, prof []int64, S, H, nh, nkv, d, hd, I, kp, pageSize, nsplit, ks1, ks2, ks3, ks4, pairs, profAt int, next, norm bool, eps, scale float32, ratio float64) {
	megaLayer(f16w{}, t, x, x2, qkv, a, act, kCache, vCache, wqkv, wo, wgu, wd, wnext, inNorm, postNorm, qNorm, kNorm, part, cnt, pos, slots, table, seqLens, prof, S, H, nh, nkv, d, hd, I, kp, pageSize, nsplit, ks1, ks2, ks3, ks4, pairs, profAt, next, norm, eps, scale, ratio)
}

// megaLayer is one layer for S ≤ megaMaxS sequences decoding one token
// each (the package doc's phases): x, x2 [S, H] the residual stream, qkv
// [S, nh·d + 2·nkv·d], a [S, nh·d], act [S, I]; the inputs' shared copy
// is the dynamic shared memory, S rows of kp (megaPlan), and ks1 … ks4
// are the four projections' k-splits.
func megaLayer[T gpu.Elem, C mcodec[T]](cd C, t gpu.Thread, x, x2, qkv []float32, a, act, kCache, vCache, wqkv, wo, wgu, wd, wnext []T, inNorm, postNorm, qNorm, kNorm, part []float32, cnt, pos, slots, table, seqLens []int32, prof []int64, S, H, nh, nkv, d, hd, I, kp, pageSize, nsplit, ks1, ks2, ks3, ks4, pairs, profAt int, next, norm bool, eps, scale float32, ratio float64) {
	megaMark(t, prof, profAt, 0)
	xs := gpu.DynShared[T](t)
	red := gpu.Shared[float32](t, megaWarps*8*megaRed)
	qs := gpu.Shared[float32](t, megaMaxG*megaMaxD)
	sc := gpu.Shared[float32](t, megaMaxG*megaChunk)
	ps := gpu.Shared[float32](t, megaMaxG*megaChunk)
	ml := gpu.Shared[float32](t, 8+2*megaMaxG)
	flag := gpu.Shared[int32](t, 2)
	meta := gpu.Shared[int32](t, 3*megaMaxS+1) // each sequence's length, position and slot; the most splits used
	qdim := nh * d

	// The block's first attention item's keys and values into L2 before
	// anything else: they are the previous steps' (static in this
	// launch), and the sequence length and block table the prefetch
	// reads are then in flight with the norm's loads rather than on the
	// chain before the first grid barrier.
	megaAttnPrefetch(t, kCache, vCache, meta, pos, slots, table, seqLens, S, nkv, d, hd, pageSize, nsplit)
	// On sm_90 the launch may start while the layer before it drains
	// (programmatic dependent launch: gpu/pdl.go): what comes above reads
	// only what no kernel of the step writes (the host's positions, slots
	// and block table; earlier steps' keys and values), and x, the layer
	// before's output, is read below.
	gpu.WaitPriorGrids(t)
	megaMark(t, prof, profAt, 1)
	// The four projections are one loop over phases, so that the GEMV's
	// unrolled body is emitted once (code size: the kernel's PTX, and
	// the instruction cache).
	megaNorm(cd, t, xs, x, inNorm, red, S, H, kp, eps)
	megaMark(t, prof, profAt, 2)
	for ph := 0; ph < 4; ph++ {
		// Slices are chosen here, not by a helper: the compiler proves
		// a weight global (Load8Stream, PrefetchL2) from the parameters
		// it may be.
		n, k := megaShape(ph, H, qdim, nkv*d, I)
		w, ks, mode, out, res := wqkv, ks1, megaStore, qkv, qkv
		switch ph {
		case 1:
			w, ks, mode, out, res = wo, ks2, megaResidual, x2, x
		case 2:
			w, ks, mode, out, res = wgu, ks3, megaSwiGLU, x2, x2
		case 3:
			w, ks, mode, out, res = wd, ks4, megaResidual, x, x2
		}
		megaGEMV(cd, t, w, xs, red, sc, part, cnt, flag, S, n, k, kp, ks, mode, pairs>>ph&1 != 0, out, res, act)
		// The next projection's first units, or the next layer's q/k/v,
		// into L2 while the grid meets (the weights are static).
		nn, nk := megaShape((ph+1)%4, H, qdim, nkv*d, I)
		nw, nks, units := wo, ks2, megaPrefetchUnits
		switch ph {
		case 1:
			nw, nks = wgu, ks3
		case 2:
			nw, nks = wd, ks4
		case 3:
			nw, nks = wnext, ks1
			if !next {
				units = 0
			}
		}
		megaPrefetch(t, nw, nn, nk, nks, units)
		megaMark(t, prof, profAt, megaDone(ph))
		if ph == 3 {
			break
		}
		if ph == 2 {
			// The next launch (the next layer, or the final norm's
			// GEMV) may be scheduled now; its blocks take an SM as this
			// launch's block there exits, prefetch and wait.
			gpu.LaunchDependents(t)
		}
		gpu.GridSync(t)
		megaMark(t, prof, profAt, megaDone(ph)+1)
		switch ph {
		case 0:
			megaAttention(cd, t, a, kCache, vCache, qkv, qNorm, kNorm, part, red, qs, sc, ps, ml, cnt, flag, meta, table, S, nh, nkv, d, hd, pageSize, nsplit, norm, eps, scale, ratio)
			megaMark(t, prof, profAt, 5)
			gpu.GridSync(t)
			megaMark(t, prof, profAt, 6)
			megaCopy(t, xs, a, S, qdim, kp)
		case 1:
			megaNorm(cd, t, xs, x2, postNorm, red, S, H, kp, eps)
			megaMark(t, prof, profAt, 9)
		case 2:
			megaCopy(t, xs, act, S, I, kp)
		}
	}
}

// The phase timer (mega_profile.go): thread 0 of each block reads its
// SM's cycle counter at megaMarks points of the layer, when the launch
// profiles (profAt ≥ 0): the start, the PDL wait's end, the input norm's
// end, each projection's end (megaDone) and the barrier after it, the
// attention's end and the barrier after it, the post-attention norm's
// end. Block b's marks are prof[profAt + b·megaMarks …].
const megaMarks = 16

// megaDone is the mark at the end of projection ph; the next mark is the
// barrier after it.
func megaDone(ph int) int {
	switch ph {
	case 0:
		return 3
	case 1:
		return 7
	case 2:
		return 10
	}
	return 12
}

// megaMark records mark k of the block, when the launch profiles.
func megaMark(t gpu.Thread, prof []int64, profAt, k int) {
	if profAt >= 0 && t.ThreadIdx().X == 0 {
		prof[profAt+t.BlockIdx().X*megaMarks+k] = gpu.Clock64(t)
	}
}

// megaShape is projection ph's weight shape, [n, k]: q/k/v, o_proj,
// gate/up (interleaved), down_proj, for hidden size H, q and k/v widths
// qdim and kvdim, intermediate size I. The kernel and planMega share it.
func megaShape(ph, H, qdim, kvdim, I int) (n, k int) {
	switch ph {
	case 1:
		return H, qdim
	case 2:
		return 2 * I, H
	case 3:
		return H, I
	}
	return qdim + 2*kvdim, H
}

// megaNorm writes RMSNorm of each of x's S rows [k] times w, rounded to
// T, into rows of kp of the block's xs, as rmsNormCast does a row (in
// another sum order), four elements a thread at a time (16-byte loads;
// k is a multiple of 32).
//
// One row (batch-1 decode): a thread keeps its first megaNormRegs chunks
// of x and w in registers from the sum of squares to the scaling, and
// loads w with x: one round trip. Rows past megaNormRegs·4·megaThreads
// elements (H > 4096, no Qwen3 up to 8B) load their tail again. Several
// rows: every row's loads are in flight together, the rows' sums meet
// behind one barrier (megaRowSums), and x is loaded again to scale it:
// two round trips whatever S, where a row at a time took S.
// Each row's arithmetic is the same either way, so a sequence's bits do
// not depend on the step's other sequences.
func megaNorm[T gpu.Elem, C mcodec[T]](cd C, t gpu.Thread, xs []T, x, w, red []float32, S, k, kp int, eps float32) {
	const step = 4 * megaThreads
	j0 := 4 * t.ThreadIdx().X
	var ss [megaMaxS]float32
	if S == 1 {
		var xv, gv [megaNormRegs][4]float32
		//kern:unroll
		for c := range megaNormRegs {
			if j := j0 + c*step; j < k {
				xv[c], gv[c] = gpu.Load4(x, j), gpu.Load4(w, j)
			}
		}
		//kern:unroll
		for c := range megaNormRegs {
			//kern:unroll
			for e := range 4 {
				ss[0] = gpu.FMA(xv[c][e], xv[c][e], ss[0]) // 0 past k: ss unchanged
			}
		}
		for j := j0 + megaNormRegs*step; j < k; j += step {
			v := gpu.Load4(x, j)
			//kern:unroll
			for e := range 4 {
				ss[0] = gpu.FMA(v[e], v[e], ss[0])
			}
		}
		r := gpu.Rsqrt(megaRowSums(t, ss, red, 1)[0]/float32(k) + eps)
		//kern:unroll
		for c := range megaNormRegs {
			if j := j0 + c*step; j < k {
				gpu.Store4(xs, j, megaScale(cd, xv[c], gv[c], r))
			}
		}
		for j := j0 + megaNormRegs*step; j < k; j += step {
			gpu.Store4(xs, j, megaScale(cd, gpu.Load4(x, j), gpu.Load4(w, j), r))
		}
		t.Sync()
		return
	}
	for j := j0; j < k; j += step {
		var v [megaMaxS][4]float32
		//kern:unroll
		for b := range megaMaxS {
			if b < S {
				v[b] = gpu.Load4(x, b*k+j)
			}
		}
		//kern:unroll
		for b := range megaMaxS {
			//kern:unroll
			for e := range 4 {
				ss[b] = gpu.FMA(v[b][e], v[b][e], ss[b]) // 0 past S: ss unchanged
			}
		}
	}
	tot := megaRowSums(t, ss, red, S)
	var r [megaMaxS]float32
	//kern:unroll
	for b := range megaMaxS {
		r[b] = gpu.Rsqrt(tot[b]/float32(k) + eps)
	}
	for j := j0; j < k; j += step {
		g := gpu.Load4(w, j)
		var v [megaMaxS][4]float32
		//kern:unroll
		for b := range megaMaxS {
			if b < S {
				v[b] = gpu.Load4(x, b*k+j)
			}
		}
		//kern:unroll
		for b := range megaMaxS {
			if b < S {
				gpu.Store4(xs, b*kp+j, megaScale(cd, v[b], g, r[b]))
			}
		}
	}
	t.Sync()
}

// megaRowSums returns the sums of ss[b] over the block, b < S, to every
// thread, each in gpu.BlockSum's order (a warp's butterfly, then the
// warps' partials, read in warp order, in a butterfly of their own) but
// the S rows behind one barrier instead of two each. red holds 32·S
// words; the closing barrier lets the caller write it again.
func megaRowSums(t gpu.Thread, ss [megaMaxS]float32, red []float32, S int) [megaMaxS]float32 {
	lane, warp := t.ThreadIdx().X%32, t.ThreadIdx().X/32
	//kern:unroll
	for b := range megaMaxS {
		if b < S {
			p := gpu.WarpSum(t, ss[b])
			if lane == 0 {
				red[b*32+warp] = p
			}
		}
	}
	t.Sync()
	var tot [megaMaxS]float32
	//kern:unroll
	for b := range megaMaxS {
		if b < S {
			v := float32(0)
			if lane < megaWarps {
				v = red[b*32+lane]
			}
			tot[b] = gpu.WarpSum(t, v)
		}
	}
	t.Sync()
	return tot
}

// megaScale is four elements of a normalised row: x·r·g, rounded to T.
func megaScale[T gpu.Elem, C mcodec[T]](cd C, x, g [4]float32, r float32) [4]T {
	return [4]T{cd.store(x[0] * r * g[0]), cd.store(x[1] * r * g[1]), cd.store(x[2] * r * g[2]), cd.store(x[3] * r * g[3])}
}

// megaCopy copies a phase's output src [S, k] into rows of kp of the
// block's xs, 8 elements (16 bytes) a load: k and kp are multiples of 32
// (megaFits, megaRow). Every row's loads are issued before the first
// store, so S rows take one round trip, not S.
func megaCopy[T gpu.Elem](t gpu.Thread, xs, src []T, S, k, kp int) {
	for j := 8 * t.ThreadIdx().X; j < k; j += 8 * megaThreads {
		var v [megaMaxS][8]T
		//kern:unroll
		for b := range megaMaxS {
			if b < S {
				v[b] = gpu.Load8(src, b*k+j)
			}
		}
		//kern:unroll
		for b := range megaMaxS {
			if b < S {
				gpu.Store8(xs, b*kp+j, v[b])
			}
		}
	}
	t.Sync()
}

// megaPlan is a model's persistent layer at one grid size: the grid, the
// attention's splits and the projections' k-splits, and the scratch the
// launch needs.
type megaPlan struct {
	grid, nsplit int
	ks           [4]int
	// pairs has bit i set where projection i runs two units a block at
	// once (megaGEMV's pair): its slices fit one iteration of half the
	// warps, and the grid has more units than blocks.
	pairs     int
	maxS, kp  int // sequences a step at most, the shared row (megaRow)
	part, cnt int // scratch lengths, float32 and int32
}

// megaFits reports why the persistent layer cannot run this model, or nil.
func megaFits(c Config, hd int) error {
	d, nh, nkv := c.HeadDim, c.NumAttentionHeads, c.NumKeyValueHeads
	switch {
	case d > megaMaxD || d%4 != 0:
		return fmt.Errorf("head dim %d (at most %d, a multiple of 4)", d, megaMaxD)
	case nkv == 0 || nh%nkv != 0 || nh/nkv > megaMaxG:
		return fmt.Errorf("%d query heads per KV head (at most %d)", nh/max(nkv, 1), megaMaxG)
	case max(c.HiddenSize, nh*d, c.IntermediateSize) > megaMaxK:
		return fmt.Errorf("a projection input of %d (at most %d)", max(c.HiddenSize, nh*d, c.IntermediateSize), megaMaxK)
	case hd < d:
		return fmt.Errorf("cache rows of %d for head dim %d", hd, d)
	}
	for _, n := range []int{c.HiddenSize, nh * d, nkv * d, c.IntermediateSize} {
		if n%32 != 0 {
			return fmt.Errorf("a projection dimension of %d (a multiple of 32 needed)", n)
		}
	}
	return nil
}

// planMega sizes the launch for grid blocks and up to maxS sequences a
// step. A projection of n rows and k columns is n/16 tiles; it is split
// along k into the ks (1 … 8, each slice at least megaUnroll·megaWarps/2
// chunks) that keeps the grid busiest over the rounds its units take, so
// that a projection of fewer tiles than blocks (o_proj and down_proj of a
// small model) still uses every SM. The attention has ⌊grid/nkv⌋ splits
// a sequence: one round of items for one sequence (⌈grid/nkv⌉ gave a
// few blocks a second round where nkv does not divide the grid: 136
// items on an H100's 132). Nothing in the plan
// depends on a step's sequence count, so neither does any sequence's
// result (batch invariance, ops.go).
func planMega(c Config, grid, maxS int) megaPlan {
	d, nh, nkv := c.HeadDim, c.NumAttentionHeads, c.NumKeyValueHeads
	p := megaPlan{grid: grid, nsplit: max(1, grid/nkv), maxS: maxS, kp: megaRow(c)}
	p.part = maxS * nh * p.nsplit * (d + 2)
	p.cnt = maxS * nkv
	for i := range p.ks {
		n, k := megaShape(i, c.HiddenSize, nh*d, nkv*d, c.IntermediateSize)
		tiles, chunks := n/16, k/32
		best, eff := 1, 0.0
		for ks := 1; ks <= megaMaxKs && (ks == 1 || chunks/ks >= megaUnroll*megaWarps/2); ks++ {
			units := tiles * ks
			rounds := (units + grid - 1) / grid
			if e := float64(units) / float64(rounds*grid); e > eff+1e-9 {
				best, eff = ks, e
			}
		}
		p.ks[i] = best
		units, per := tiles*best, (chunks+best-1)/best
		if per <= megaUnroll*megaWarps/2 && (units+2*grid-1)/(2*grid) < (units+grid-1)/grid {
			p.pairs |= 1 << i
		}
		p.part = max(p.part, tiles*best*16*maxS)
		p.cnt = max(p.cnt, tiles)
	}
	return p
}

// megaRow is the row of the inputs' shared copy, in elements: the
// longest projection input rounded up to 64 elements, and 32 more. The
// GEMV's B loads are 16 bytes a lane, lanes 4g … 4g+3 reading 64 bytes
// of row g, and a quarter warp (one phase of a 128-bit shared load)
// reads rows 2k and 2k+1: a row of 64 mod 128 bytes puts the two in
// different halves of the 32 banks.
func megaRow(c Config) int {
	k := max(c.HiddenSize, c.NumAttentionHeads*c.HeadDim, c.IntermediateSize)
	return (k+63)&^63 + 32
}

// megaMaxSeqs is the most sequences a step of the model may have: the
// mma's 8 columns, and the inputs' copy within megaSharedBytes.
func megaMaxSeqs(c Config) int {
	return min(megaMaxS, megaSharedBytes/(2*megaRow(c)))
}

// megaState is a workspace's persistent-layer launch: its plan and
// scratch, made on its first decode step.
type megaState struct {
	plan megaPlan
	part *kern.Buffer[float32]
	cnt  *kern.Buffer[int32]
	// prof holds the phase timer's marks (mega_profile.go): megaMarks a
	// block a layer when profiling, else one unused word.
	prof    *kern.Buffer[int64]
	profile bool
}

func (s *megaState) free() {
	if s == nil {
		return
	}
	if s.part != nil {
		s.part.Free()
	}
	if s.cnt != nil {
		s.cnt.Free()
	}
	if s.prof != nil {
		s.prof.Free()
	}
}

// newMegaState plans the launch at the largest cooperative grid (at most
// maxGrid blocks if maxGrid > 0) and allocates its scratch, the counters
// zeroed.
func newMegaState[T ops.Half16](m *Model, q kern.Queue, maxGrid int) (*megaState, error) {
	k := megaLayerBF16Kernel.Kernel()
	var z T
	if _, ok := any(z).(gpu.Half); ok {
		k = megaLayerF16Kernel.Kernel()
	}
	// The most sequences whose inputs' copy the device's shared memory
	// holds (an sm_90 block may have 227 KiB, an sm_80 one 163).
	maxS := megaMaxSeqs(*m.Config)
	grid, err := k.MaxCooperativeBlocks(q, gpu.Dim3{X: megaThreads, Y: 1, Z: 1}, 2*maxS*megaRow(*m.Config))
	for (err != nil || grid < 1) && maxS > 1 {
		maxS--
		grid, err = k.MaxCooperativeBlocks(q, gpu.Dim3{X: megaThreads, Y: 1, Z: 1}, 2*maxS*megaRow(*m.Config))
	}
	if err == nil && grid < 1 {
		err = fmt.Errorf("no block of %d threads with %d bytes of shared memory fits an SM", megaThreads, 2*megaRow(*m.Config))
	}
	if err != nil {
		return nil, fmt.Errorf("qwen3: persistent decode: %w", err)
	}
	switch {
	case maxGrid > 0:
		grid = min(grid, maxGrid)
	case m.dev.Kind() != "cuda":
		// The emulator and native mode run a block per goroutine and take
		// every block through each barrier: a small grid, not an H100's.
		grid = min(grid, megaHostGrid)
	}
	s := &megaState{plan: planMega(*m.Config, grid, maxS), profile: m.ops.profile}
	nprof := 1
	if s.profile {
		nprof = len(m.layers) * grid * megaMarks
	}
	if s.part, err = kern.Alloc[float32](m.dev, s.plan.part); err == nil {
		if s.cnt, err = kern.Alloc[int32](m.dev, s.plan.cnt); err == nil {
			if err = s.cnt.CopyFrom(make([]int32, s.plan.cnt)); err == nil {
				s.prof, err = kern.Alloc[int64](m.dev, nprof)
			}
		}
	}
	if err != nil {
		s.free()
		return nil, fmt.Errorf("qwen3: persistent decode scratch: %w", err)
	}
	return s, nil
}

// megaLaunch runs layer li as one persistent launch: x → x (x2 the
// attention's residual), q/k/v, attention output and activation through
// b; next is the layer after it (nil after the last), whose q/k/v
// weights the launch's end prefetches.
func megaLaunch[T ops.Half16](m *Model, q kern.Queue, s *megaState, b *opsBufs[T], w *workspace, li int, next *layer, kc, vc *kern.Buffer[T], pageSize int) error {
	y := &m.layers[li]
	c := *m.Config
	p := s.plan
	profAt, profEnd := -1, 0
	if s.profile {
		profAt = li * p.grid * megaMarks
		profEnd = profAt + p.grid*megaMarks
	}
	if err := megaCheck(c, m.ops.hd, p, s, b, w, y, kc, pageSize, profEnd); err != nil {
		return fmt.Errorf("qwen3: persistent decode: %w", err)
	}
	S := w.S
	grid := kern.Blocks(gpu.Dim3{X: p.grid, Y: 1, Z: 1}, gpu.Dim3{X: megaThreads, Y: 1, Z: 1}).WithShared(2 * S * p.kp)
	qNorm, kNorm, norm := y.qNorm, y.kNorm, y.qNorm != nil
	if !norm {
		qNorm, kNorm = y.inNorm, y.inNorm // read by no thread
	}
	wnext, hasNext := wbuf[T](y.q), next != nil
	if hasNext {
		wnext = wbuf[T](next.q)
	}
	scale := float32(1 / math.Sqrt(float64(c.HeadDim)))
	ratio := math.Pow(c.RopeTheta, -2/float64(c.HeadDim))
	switch any(b.au).(type) {
	case *kern.Buffer[gpu.BFloat16]:
		bf := func(x *kern.Buffer[T]) *kern.Buffer[gpu.BFloat16] { return any(x).(*kern.Buffer[gpu.BFloat16]) }
		return megaLayerBF16Kernel.Launch(q, grid, w.x, w.x2, b.qkv, bf(b.au), bf(b.act), bf(kc), bf(vc),
			bf(wbuf[T](y.q)), bf(wbuf[T](y.o)), bf(wbuf[T](y.gate)), bf(wbuf[T](y.down)), bf(wnext),
			y.inNorm, y.postNorm, qNorm, kNorm, s.part, s.cnt, w.pos, w.slot, w.table, w.seqLens, s.prof,
			S, c.HiddenSize, c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim, m.ops.hd, c.IntermediateSize, p.kp, pageSize,
			p.nsplit, p.ks[0], p.ks[1], p.ks[2], p.ks[3], p.pairs, profAt, hasNext, norm, float32(c.RMSNormEps), scale, ratio)
	case *kern.Buffer[gpu.Half]:
		hf := func(x *kern.Buffer[T]) *kern.Buffer[gpu.Half] { return any(x).(*kern.Buffer[gpu.Half]) }
		return megaLayerF16Kernel.Launch(q, grid, w.x, w.x2, b.qkv, hf(b.au), hf(b.act), hf(kc), hf(vc),
			hf(wbuf[T](y.q)), hf(wbuf[T](y.o)), hf(wbuf[T](y.gate)), hf(wbuf[T](y.down)), hf(wnext),
			y.inNorm, y.postNorm, qNorm, kNorm, s.part, s.cnt, w.pos, w.slot, w.table, w.seqLens, s.prof,
			S, c.HiddenSize, c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim, m.ops.hd, c.IntermediateSize, p.kp, pageSize,
			p.nsplit, p.ks[0], p.ks[1], p.ks[2], p.ks[3], p.pairs, profAt, hasNext, norm, float32(c.RMSNormEps), scale, ratio)
	}
	return fmt.Errorf("qwen3: persistent decode of %T", b.au)
}

// UsePersistentDecode turns the persistent decode layer on or off: with
// it on, a decode step of up to 8 sequences on the ops path runs each
// layer as one cooperative launch (this file's doc); a step of more runs
// the six launches. Call it after UseOps and
// before the first decode step (a captured decode graph keeps what it
// recorded). It fails, naming the limit, for a model it cannot run.
func (m *Model) UsePersistentDecode(on bool) error {
	if m.ops == nil {
		return errors.New("qwen3: the persistent decode layer runs on the ops path: call UseOps first")
	}
	if on {
		if err := megaFits(*m.Config, m.ops.hd); err != nil {
			return fmt.Errorf("qwen3: persistent decode: %w", err)
		}
	}
	m.ops.persistent = on
	return nil
}

// megaCheck checks every buffer the nobounds kernel reads or writes
// against the lengths the shapes give it, naming the first that falls
// short; the phase timer's marks run to profEnd (0 when it is off).
func megaCheck[T ops.Half16](c Config, hd int, p megaPlan, s *megaState, b *opsBufs[T], w *workspace, y *layer, kc *kern.Buffer[T], pageSize, profEnd int) error {
	H, I, d, nh, nkv, S := c.HiddenSize, c.IntermediateSize, c.HeadDim, c.NumAttentionHeads, c.NumKeyValueHeads, w.S
	nqkv := (nh + 2*nkv) * d
	if S < 1 || S > p.maxS || w.R != S {
		return fmt.Errorf("%d rows of %d sequences (one token each, at most %d)", w.R, S, p.maxS)
	}
	for _, e := range []struct {
		name   string
		n, min int
	}{
		{"x", w.x.Len(), S * H}, {"x2", w.x2.Len(), S * H}, {"qkv", b.qkv.Len(), S * nqkv},
		{"attention output", b.au.Len(), S * nh * d}, {"activation", b.act.Len(), S * I},
		{"q/k/v weight", wbuf[T](y.q).Len(), nqkv * H}, {"o_proj weight", wbuf[T](y.o).Len(), H * nh * d},
		{"gate/up weight", wbuf[T](y.gate).Len(), 2 * I * H}, {"down_proj weight", wbuf[T](y.down).Len(), H * I},
		{"input norm", y.inNorm.Len(), H}, {"post-attention norm", y.postNorm.Len(), H},
		{"split scratch", s.part.Len(), p.part}, {"arrival counters", s.cnt.Len(), p.cnt},
		{"positions", w.pos.Len(), S}, {"slots", w.slot.Len(), S}, {"block table", w.table.Len(), S}, {"sequence lengths", w.seqLens.Len(), S},
		{"key cache", kc.Len(), pageSize * nkv * hd}, {"phase timer", s.prof.Len(), profEnd},
	} {
		if e.n < e.min {
			return fmt.Errorf("the %s holds %d elements, the layer reads %d", e.name, e.n, e.min)
		}
	}
	if y.qNorm != nil && (y.qNorm.Len() < d || y.kNorm == nil || y.kNorm.Len() < d) {
		return fmt.Errorf("QK-norm weights shorter than the head dim %d", d)
	}
	if w.table.Len() != S*w.P {
		return fmt.Errorf("a block table of %d entries for %d sequences of %d pages", w.table.Len(), S, w.P)
	}
	return nil
}

// UsingPersistentDecode reports whether UsePersistentDecode turned the
// persistent decode layer on.
func (m *Model) UsingPersistentDecode() bool { return m.ops != nil && m.ops.persistent }
