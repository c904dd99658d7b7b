package ops

// The paged KV cache's host side and its write op.
//
// PageAllocator hands out the pages of a cache of numPages pages of
// pageSize tokens from a free list and keeps each sequence's block table
// (its pages in order). Append reserves room for new tokens and returns
// their slots (page·pageSize + row, vLLM's slot mapping); it either
// reserves all of them or, with too few free pages, none, and returns an
// error wrapping ErrOutOfPages, so a full cache never overwrites a page a
// sequence still owns. Free returns a sequence's pages.
//
// KVCacheWrite appends rows to the cache (vLLM's reshape_and_cache_flash):
//
//	k, v            [tokens, kvHeads, headDim]    the new rows
//	slots           [tokens] int32                destination slot; < 0 skips the token (padding)
//	kCache, vCache  [numPages, pageSize, kvHeads, headDim]
//
// With rope set, k is rotated first (rotate-half RoPE, as ops.RoPE, at the
// token's own position from positions [tokens] int32), so a decode step
// writes rotated keys in one pass. One thread per (token, head, pair i <
// headDim/2) moves k[i], k[i+half], v[i], v[i+half]; the kernel keeps its
// bounds checks, so a slot past the cache is a *kern.DeviceError.
//
// Versions: v1 only.

import (
	"errors"
	"fmt"
	"github.com/gokern/kern/internal/rotary"
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// ErrOutOfPages is wrapped by PageAllocator.Append when the cache has too
// few free pages.
var ErrOutOfPages = errors.New("out of KV-cache pages")

// PageAllocator allocates the pages of a paged KV cache to sequences.
// It is not safe for concurrent use.
type PageAllocator struct {
	pageSize int
	numPages int
	free     []int32 // a stack: the last freed page is reused first
	seqs     map[int]*pageSeq
}

type pageSeq struct {
	pages []int32
	n     int // tokens
}

// NewPageAllocator manages numPages pages of pageSize tokens.
func NewPageAllocator(numPages, pageSize int) (*PageAllocator, error) {
	if numPages < 1 || numPages > math.MaxInt32 || pageSize < 1 {
		return nil, fmt.Errorf("ops.NewPageAllocator: numPages = %d, pageSize = %d: want both ≥ 1", numPages, pageSize)
	}
	a := &PageAllocator{pageSize: pageSize, numPages: numPages, seqs: map[int]*pageSeq{}}
	a.free = make([]int32, numPages)
	for i := range a.free {
		a.free[i] = int32(numPages - 1 - i) // page 0 is handed out first
	}
	return a, nil
}

// FreePages is the number of pages not owned by any sequence.
func (a *PageAllocator) FreePages() int { return len(a.free) }

// Len is the number of tokens sequence seq holds.
func (a *PageAllocator) Len(seq int) int {
	if s := a.seqs[seq]; s != nil {
		return s.n
	}
	return 0
}

// Append reserves n more tokens for sequence seq (created on first use)
// and returns their slots, in order. With too few free pages it reserves
// nothing and returns an error wrapping ErrOutOfPages.
func (a *PageAllocator) Append(seq, n int) ([]int32, error) {
	if n < 0 {
		return nil, fmt.Errorf("ops.PageAllocator.Append: n = %d, want ≥ 0", n)
	}
	s := a.seqs[seq]
	if s == nil {
		s = &pageSeq{}
	}
	need := (s.n+n+a.pageSize-1)/a.pageSize - len(s.pages)
	if need > len(a.free) {
		return nil, fmt.Errorf("ops.PageAllocator.Append: sequence %d needs %d more pages for %d tokens, %d of %d are free: %w",
			seq, need, n, len(a.free), a.numPages, ErrOutOfPages)
	}
	a.seqs[seq] = s
	for range need {
		s.pages = append(s.pages, a.free[len(a.free)-1])
		a.free = a.free[:len(a.free)-1]
	}
	slots := make([]int32, n)
	for i := range slots {
		t := s.n + i
		slots[i] = s.pages[t/a.pageSize]*int32(a.pageSize) + int32(t%a.pageSize)
	}
	s.n += n
	return slots, nil
}

// Free returns sequence seq's pages to the free list.
func (a *PageAllocator) Free(seq int) {
	s := a.seqs[seq]
	if s == nil {
		return
	}
	for i := len(s.pages) - 1; i >= 0; i-- {
		a.free = append(a.free, s.pages[i])
	}
	delete(a.seqs, seq)
}

// BlockTable returns the block table ([len(seqs), maxPages], unused
// entries 0) and lengths of the given sequences, PagedAttention's inputs.
func (a *PageAllocator) BlockTable(seqs []int, maxPages int) (table, lens []int32, err error) {
	table = make([]int32, len(seqs)*maxPages)
	lens = make([]int32, len(seqs))
	for i, id := range seqs {
		s := a.seqs[id]
		if s == nil {
			continue
		}
		if len(s.pages) > maxPages {
			return nil, nil, fmt.Errorf("ops.PageAllocator.BlockTable: sequence %d has %d pages, more than maxPages = %d", id, len(s.pages), maxPages)
		}
		copy(table[i*maxPages:], s.pages)
		lens[i] = int32(s.n)
	}
	return table, lens, nil
}

// ---------------------------------------------------------------------------
// kernels

//kern:kernel block=256
func kvWriteF16(t gpu.Thread, kCache, vCache, k, v []gpu.Half, slots, positions []int32, kvHeads, headDim int, rope bool, ratio float64) {
	kvWrite(f16c{}, t, kCache, vCache, k, v, slots, positions, kvHeads, headDim, rope, ratio)
}

//kern:kernel block=256
func kvWriteBF16(t gpu.Thread, kCache, vCache, k, v []gpu.BFloat16, slots, positions []int32, kvHeads, headDim int, rope bool, ratio float64) {
	kvWrite(bf16c{}, t, kCache, vCache, k, v, slots, positions, kvHeads, headDim, rope, ratio)
}

// kvWrite moves pair i of head vector GlobalX/half (token·kvHeads + head).
func kvWrite[T any, C codec[T]](c C, t gpu.Thread, kCache, vCache, k, v []T, slots, positions []int32, kvHeads, headDim int, rope bool, ratio float64) {
	half := headDim / 2
	g := t.GlobalX()
	if g >= len(k)/2 {
		return
	}
	i, vec := g%half, g/half
	tok := vec / kvHeads
	slot := int(slots[tok])
	if slot < 0 {
		return
	}
	src := vec*headDim + i
	dst := (slot*kvHeads+vec%kvHeads)*headDim + i
	if rope {
		sin, cos := rotary.SinCos(int(positions[tok]), i, ratio)
		x1, x2 := c.load(k[src]), c.load(k[src+half])
		kCache[dst] = c.store(x1*cos - x2*sin)
		kCache[dst+half] = c.store(x2*cos + x1*sin)
	} else {
		kCache[dst], kCache[dst+half] = k[src], k[src+half]
	}
	vCache[dst], vCache[dst+half] = v[src], v[src+half]
}

// ---------------------------------------------------------------------------
// Go API

var kvWriteK = [2]*kern.Kernel{kvWriteF16Kernel.Kernel(), kvWriteBF16Kernel.Kernel()}

// KVWrite is the shape of a KVCacheWrite call.
type KVWrite struct {
	Tokens, KVHeads, HeadDim int
	// Theta > 0 rotates k with RoPE of base Theta at positions (which
	// may then not be nil); 0 copies k as it is.
	Theta float64
}

// KVCacheWrite writes the rows k and v of each token to its slot of
// kCache and vCache (layout in the file header).
func KVCacheWrite[T Half16](q kern.Queue, kCache, vCache, k, v *kern.Buffer[T], slots, positions *kern.Buffer[int32], w KVWrite) error {
	s := newShape("ops.KVCacheWrite")
	s.atLeast("Tokens", w.Tokens, 0)
	s.atLeast("KVHeads", w.KVHeads, 1)
	s.atLeast("HeadDim", w.HeadDim, 2)
	if w.HeadDim%2 != 0 {
		s.fail("HeadDim = %d, want an even number", w.HeadDim)
	}
	rope := w.Theta != 0
	if rope && (!(w.Theta > 1) || math.IsInf(w.Theta, 0)) {
		s.fail("Theta = %g, want 0 or a finite base > 1", w.Theta)
	}
	n := s.mul(s.mul(w.Tokens, w.KVHeads), w.HeadDim)
	buf(s, "k", k, n, "tokens×kvHeads×headDim")
	buf(s, "v", v, n, "tokens×kvHeads×headDim")
	buf(s, "slots", slots, w.Tokens, "tokens")
	notNil(s, "kCache", kCache)
	if s.err == nil {
		buf(s, "vCache", vCache, kCache.Len(), "kCache's length")
	}
	if rope {
		buf(s, "positions", positions, w.Tokens, "tokens")
	}
	if s.err != nil || w.Tokens == 0 {
		return s.err
	}
	pos := positions
	if !rope {
		pos = slots // read by no thread
	}
	ratio := 0.0
	if rope {
		ratio = math.Pow(w.Theta, -2/float64(w.HeadDim))
	}
	return s.launch(kvWriteK[dtypeIndex[T]()-1], q, kern.Cover(n/2), bufArg(kCache), bufArg(vCache), bufArg(k), bufArg(v),
		bufArg(slots), bufArg(pos), intArg(w.KVHeads), intArg(w.HeadDim), kern.ScalarArg(rope), kern.ScalarArg(ratio))
}
