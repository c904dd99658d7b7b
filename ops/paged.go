package ops

// PagedAttention: decode attention, one query token per sequence, against
// a paged KV cache (vLLM's PagedAttention layout, as its FlashAttention
// backend stores it):
//
//	for each sequence b of length n_b, query head h, KV head h/(heads/kvHeads):
//	  s_j = scale · q_b,h · k_b,j     j < n_b
//	  out_b,h = Σ_j softmax(s)_j · v_b,j
//
// Shapes, row-major, T ∈ {float16, bfloat16}:
//
//	q, out          [seqs, heads, headDim]
//	kCache, vCache  [numPages, pageSize, kvHeads, headDim]   pageSize 16 or 32
//	blockTable      [seqs, maxPages] int32   token j of sequence b lives in page
//	                                         blockTable[b, j/pageSize], row j%pageSize
//	seqLens         [seqs] int32             n_b ≤ maxPages·pageSize
//
// Pages may sit anywhere in the pool and in any order (PageAllocator hands
// them out from a free list). headDim is 64, 128 or 256.
//
// The kernel (ops/internal/decodek, paged.go) gives each block one KV head
// and up to 8 of its query heads, so every K and V row is read from memory
// once per group of query heads (GQA/MQA; larger groups take several
// blocks). It walks its tokens in chunks of 64: scores with the group's
// queries, an online-softmax update of each head's running max and sum,
// then P·V into per-lane accumulators; at the end the four warps'
// accumulators are summed in shared memory.
//
// Split-K (flash-decoding): with Partition > 0 a sequence's tokens are
// cut into splits of Partition tokens, each a block of its own, so a
// handful of long sequences still fill the GPU. v3 at head dim 128 (the
// engine's kernel) differs in two ways: a sequence of n tokens is spread
// over all ⌈maxSeqLen/Partition⌉ splits, in splits of ⌈n/splits⌉ rounded
// up to 64 (decodemma.SplitLen), so a short sequence in a grid sized for
// long ones still gets many short splits rather than a few long ones;
// and its blocks take their sequence's splits in a grid-stride loop, the
// grid bounded near 8 blocks per SM (pagedStride), so a batch of many
// sequences does not launch a block for every split it leaves empty. The
// splits depend on the sequence alone and only which block takes them
// on the batch, so a sequence's result has the same bits in any batch. Each split writes its
// normalised partial output and its (max, sum) to a SplitScratch, and
// they are combined: with M the largest split maximum, out =
// Σ_s ℓ_s·2^(m_s - M)·o_s / Σ_s ℓ_s·2^(m_s - M), in split order. v3
// combines them in the attention kernel (the last of a sequence's splits
// to finish does, counted in the scratch's arrival counters, so no second
// kernel runs; a sequence that fits in its first split is written by
// that split's block directly, as without split-K); after v1 and v2 a
// second kernel (PagedReduce) does. With Partition = 0 one block walks the
// whole sequence and writes out directly.
//
// Checks: shapes on the host; on the device each block checks its
// sequence length and the block-table entries it reads once, up front
// (a bad one is reported as a *kern.DeviceError), so the loops carry no
// bounds checks (the kernels are nobounds).
//
// Versions (Paged.Version picks one; 0 lets the op choose: v3 at head
// dims 64 and 128, v1 at 256):
//
//   - v1 (ops/internal/decodek): CUDA-core dot products, 64-token chunks
//     shared by the block's four warps (scores, a block barrier, the
//     softmax, a barrier, P·V). Its main loop is about 5000 SASS per warp
//     and 16 tokens (shared-memory query reads, shuffle sums and a block
//     table load before every K and V row), which caps it near 1.6 TB/s
//     on an H100 even with every load's latency hidden; measured 1.2.
//   - v2 (ops/internal/decodemma): both products on the tensor cores
//     (m16n8k16; the query group is the N of P·V and padded to 16 rows in
//     Q·Kᵀ), each warp its own online softmax over 16-token steps, no
//     block barrier in the loop, a step's page number read one step ahead
//     and its K and V loads (clamped, not branched) written before the
//     products. About 370 SASS per warp and 16 tokens at head dim 128,
//     142-152 registers; ptxas issues about half the step's loads after
//     its first product, so a step waits on memory twice.
//   - v3: v2 software-pipelined: each iteration issues the next step's
//     loads into a second set of registers, then computes the current
//     step from the set loaded an iteration earlier, so one memory
//     latency per step overlaps a whole step of work. About 540 SASS per
//     step (the register copies) and 242 registers, so 2 blocks per SM
//     where v2 has 3.
//
// v2 and v3 round P to T for the second product (FlashAttention-2 does
// the same), so their error is a unit of T relative to Σ p·|v| / Σ p
// where v1's is float32's. They have no kernels at head dim 256 (their
// register arrays would not fit), which stays on v1.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/decodek"
	"github.com/gokern/kern/ops/internal/decodemma"
)

var (
	pagedK = [2][3]*kern.Kernel{
		{decodek.PagedF16D64Kernel.Kernel(), decodek.PagedF16D128Kernel.Kernel(), decodek.PagedF16D256Kernel.Kernel()},
		{decodek.PagedBF16D64Kernel.Kernel(), decodek.PagedBF16D128Kernel.Kernel(), decodek.PagedBF16D256Kernel.Kernel()},
	}
	pagedReduceK = [2]*kern.Kernel{decodemma.PagedReduceF16Kernel.Kernel(), decodemma.PagedReduceBF16Kernel.Kernel()}

	// v2 and v3, per element type and head dim (64, 128).
	pagedK2 = [2][2]*kern.Kernel{
		{decodemma.PagedF16D64Kernel.Kernel(), decodemma.PagedF16D128Kernel.Kernel()},
		{decodemma.PagedBF16D64Kernel.Kernel(), decodemma.PagedBF16D128Kernel.Kernel()},
	}
	pagedK3 = [2][2]*kern.Kernel{
		{decodemma.PagedAheadF16D64Kernel.Kernel(), decodemma.PagedAheadF16D128Kernel.Kernel()},
		{decodemma.PagedAheadBF16D64Kernel.Kernel(), decodemma.PagedAheadBF16D128Kernel.Kernel()},
	}
)

// Paged is the shape and options of a PagedAttention call.
type Paged struct {
	Heads, KVHeads int // Heads % KVHeads == 0
	HeadDim        int // 64, 128 or 256
	PageSize       int // tokens per page: 16 or 32
	MaxPages       int // the block table's row length
	// Scale multiplies q·k before the softmax; 0 means 1/√HeadDim.
	Scale float32
	// Partition is the split-K size in tokens, a multiple of 64; 0 turns
	// split-K off. DecodePartition picks one that fills a GPU. For v3 at
	// head dim 128 it is the longest split: maxSeqLen / Partition splits,
	// over which each sequence is spread (the file header).
	Partition int
	// Version is the kernel (see the file header): 0 lets the op choose
	// (PagedVersion), 1, 2 or 3 asks for one; v2 and v3 exist at head
	// dims 64 and 128 only.
	Version int
	// HostTables says that blockTable and seqLens are not written by any
	// kernel that may still be running when the op starts (the host
	// copies them, as an engine does each step). On a GPU with
	// programmatic dependent launch (kern.Device.PDL) v2 and v3 then read
	// and check them before waiting for the kernels queued before them
	// (which write q and the cache), so the tables' round trips overlap
	// those kernels. A table written by the kernel just before would be
	// read too early.
	HostTables bool
}

// PagedVersion is the kernel version PagedAttention runs for p.
func PagedVersion(p Paged) int {
	fast := p.HeadDim == 64 || p.HeadDim == 128
	if p.Version == 0 && fast && (PagedDefault == 2 || PagedDefault == 3) {
		return PagedDefault
	}
	if p.Version == 0 && fast {
		return 3
	}
	return max(p.Version, 1)
}

// PagedDefault, when 2 or 3, is the version PagedAttention runs at head
// dims 64 and 128 for a Paged that names none (Version 0), instead of 3,
// so that a GPU run can time two versions through an engine that never
// names one; KERN_PAGED_VERSION in the environment sets it at start. Set
// it only while no PagedAttention runs on another goroutine.
var PagedDefault, _ = strconv.Atoi(os.Getenv("KERN_PAGED_VERSION"))

// Splits is the number of splits of a sequence of up to maxSeqLen tokens.
func (p Paged) Splits(maxSeqLen int) int {
	if p.Partition <= 0 {
		return 1
	}
	return max(1, (maxSeqLen+p.Partition-1)/p.Partition)
}

// SplitScratch is the float32 workspace split-K writes its partial
// results to: a partial output and a (max, sum) pair per sequence, head
// and split.
type SplitScratch struct {
	o, ml *kern.Buffer[float32]
	// cnt counts, per sequence and head group, the splits that have
	// written their partials (v2 and v3); the last resets it to 0.
	cnt                *kern.Buffer[uint32]
	seqs, heads, hd, n int
}

// NewSplitScratch allocates scratch for seqs sequences of heads heads of
// headDim, cut into up to splits splits.
func NewSplitScratch(dev *kern.Device, seqs, heads, headDim, splits int) (*SplitScratch, error) {
	n := seqs * heads * splits
	o, err := kern.Alloc[float32](dev, max(1, n*headDim))
	if err != nil {
		return nil, fmt.Errorf("ops.NewSplitScratch: %w", err)
	}
	ml, err := kern.Alloc[float32](dev, max(1, 2*n))
	if err != nil {
		o.Free()
		return nil, fmt.Errorf("ops.NewSplitScratch: %w", err)
	}
	cnt, err := kern.Alloc[uint32](dev, max(1, seqs*heads)) // zeroed: nothing has arrived
	if err != nil {
		o.Free()
		ml.Free()
		return nil, fmt.Errorf("ops.NewSplitScratch: %w", err)
	}
	return &SplitScratch{o: o, ml: ml, cnt: cnt, seqs: seqs, heads: heads, hd: headDim, n: splits}, nil
}

// Free releases the scratch buffers.
func (s *SplitScratch) Free() {
	s.o.Free()
	s.ml.Free()
	s.cnt.Free()
}

// PagedAttention computes one decode step of attention for every sequence
// (layout in the file header). maxSeqLen bounds seqLens and sizes the
// split-K grid; scratch is needed when p.Partition > 0.
func PagedAttention[T Half16](queue kern.Queue, out, q, kCache, vCache *kern.Buffer[T], blockTable, seqLens *kern.Buffer[int32], maxSeqLen int, p Paged, scratch *SplitScratch) error {
	s := newShape("ops.PagedAttention")
	hd := Attention{Heads: p.Heads, KVHeads: p.KVHeads, HeadDim: p.HeadDim}.checkHeads(s)
	shift := 0
	switch p.PageSize {
	case 16:
		shift = 4
	case 32:
		shift = 5
	default:
		s.fail("PageSize = %d, want 16 or 32", p.PageSize)
	}
	s.atLeast("MaxPages", p.MaxPages, 1)
	s.atLeast("maxSeqLen", maxSeqLen, 0)
	if p.Partition < 0 || p.Partition%decodek.PagedChunk != 0 {
		s.fail("Partition = %d, want 0 or a positive multiple of %d", p.Partition, decodek.PagedChunk)
	}
	version := PagedVersion(p)
	if version < 1 || version > 3 || version > 1 && hd == 2 {
		s.fail("Version = %d at head dim %d, want 0, 1 or (head dim 64 or 128) 2 or 3", p.Version, p.HeadDim)
	}
	if s.err == nil && maxSeqLen > p.MaxPages*p.PageSize {
		s.fail("maxSeqLen = %d exceeds MaxPages×PageSize = %d", maxSeqLen, p.MaxPages*p.PageSize)
	}
	notNil(s, "seqLens", seqLens)
	notNil(s, "kCache", kCache)
	if s.err != nil {
		return s.err
	}
	seqs := seqLens.Len()
	row := s.mul(p.Heads, p.HeadDim)
	page := s.mul(s.mul(p.PageSize, p.KVHeads), p.HeadDim)
	if s.err == nil && (kCache.Len() == 0 || kCache.Len()%page != 0) {
		s.fail("kCache has %d elements, want a positive multiple of pageSize×kvHeads×headDim = %d", kCache.Len(), page)
	}
	buf(s, "vCache", vCache, kCache.Len(), "kCache's length")
	buf(s, "q", q, s.mul(seqs, row), "seqs×heads×headDim")
	buf(s, "out", out, s.mul(seqs, row), "seqs×heads×headDim")
	buf(s, "blockTable", blockTable, s.mul(seqs, p.MaxPages), "seqs×MaxPages")
	splits := p.Splits(maxSeqLen)
	partition := p.Partition
	if splits == 1 {
		partition = p.MaxPages * p.PageSize // one split covers any sequence
	} else if scratch == nil {
		s.fail("Partition = %d needs a SplitScratch", p.Partition)
	} else if scratch.seqs < seqs || scratch.heads != p.Heads || scratch.hd != p.HeadDim || scratch.n < splits {
		s.fail("scratch holds %d seqs × %d heads × %d dims × %d splits, want %d × %d × %d × %d",
			scratch.seqs, scratch.heads, scratch.hd, scratch.n, seqs, p.Heads, p.HeadDim, splits)
	}
	if s.err != nil || seqs == 0 {
		return s.err
	}
	var po, pml *kern.Buffer[float32]
	var cnt *kern.Buffer[uint32]
	if splits > 1 {
		po, pml, cnt = scratch.o, scratch.ml, scratch.cnt
	} else {
		var err error
		if po, err = unused(seqLens.Device(), 0); err == nil {
			if pml, err = unused(seqLens.Device(), 1); err == nil {
				cnt, err = unusedCounter(seqLens.Device())
			}
		}
		if err != nil {
			return fmt.Errorf("ops.PagedAttention: %w", err)
		}
	}
	scale := Attention{HeadDim: p.HeadDim, Scale: p.Scale}.scale()
	chunks := (p.Heads/p.KVHeads + decodek.PagedGroup - 1) / decodek.PagedGroup
	dt := dtypeIndex[T]() - 1
	blocks := gpu.Dim3{X: splits, Y: p.KVHeads * chunks, Z: seqs}
	if decodemma.Strided(version == 3, p.HeadDim) {
		// A sequence's splits in a grid-stride loop: the grid need not
		// grow with splits a batch never fills. The others run a block
		// per split.
		blocks.X = pagedStride(seqLens.Device().Multiprocessors(), splits, blocks.Y*blocks.Z)
	}
	grid := kern.Blocks(blocks, gpu.Dim3{X: 128, Y: 1, Z: 1})
	head := []kern.Arg{bufArg(q), bufArg(kCache), bufArg(vCache),
		bufArg(blockTable), bufArg(seqLens), intArg(p.Heads), intArg(p.KVHeads), intArg(shift), intArg(p.MaxPages), intArg(kCache.Len() / page), intArg(partition)}
	scaleArg := f32Arg(scale * math.Log2E)
	if version != 1 {
		k := pagedK3[dt][hd]
		if version == 2 {
			k = pagedK2[dt][hd]
		}
		args := append([]kern.Arg{bufArg(out), bufArg(po), bufArg(pml), kern.BufferArg(cnt)}, head...)
		args = append(args, intArg(splits), scaleArg, kern.ScalarArg(p.HostTables))
		err := s.launch(k, queue, grid, args...)
		if err != nil && splits > 1 && version == 3 {
			// A launch that stopped part way (the emulator reports a bad
			// sequence length before any split arrives, but a GPU fault
			// is anywhere) may leave counts behind: start from zero.
			if zerr := cnt.CopyFrom(make([]uint32, cnt.Len())); zerr != nil {
				err = errors.Join(err, zerr)
			}
		}
		if err != nil || splits == 1 || version == 3 { // v3 reduces in the kernel
			return err
		}
	} else if err := s.launch(pagedK[dt][hd], queue, grid, append(append([]kern.Arg{bufArg(out), bufArg(po), bufArg(pml)}, head...), scaleArg)...); err != nil || splits == 1 {
		return err
	}
	return s.launch(pagedReduceK[dt], queue, kern.Blocks(gpu.Dim3{X: p.Heads, Y: seqs, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1}),
		bufArg(out), bufArg(po), bufArg(pml), bufArg(seqLens), intArg(p.Heads), intArg(p.HeadDim), intArg(splits), intArg(partition))
}
