// Package topk holds ops.TopK's kernels: the k largest elements of each
// row, largest first, the candidates a sampler draws from. A decode step
// then hands the host k pairs per sequence instead of its whole row of
// logits (a 151,936-token Qwen3 vocabulary is 600 KB, tens of µs over
// PCIe before the host has looked at it).
//
// Order: larger first, and equal values by lower index first, which is
// llm/sample's order (ties toward the lower token id), so the k pairs are
// exactly the first k of that order over the whole row. NaN counts as
// -Inf, as the sampler counts it.
//
// Algorithm. Each element becomes a 64-bit key: the order-preserving 32
// bits of its float32 value (negative values' bits flipped, the others'
// sign bit set) above the complement of its index, so that keys are
// distinct and a larger key comes first in the order above. A level of
// the selection is one block of 256 threads per chunk of Chunk keys (16 a
// thread, in registers):
//
//  1. the chunk's k-th largest key T, found bit by bit from the top, as
//     ops.Sample finds its thresholds: a candidate bit is kept when at
//     least k keys are ≥ it, counted with gpu.BlockSum. It stops as soon
//     as exactly k keys are ≥ the threshold; distinct keys make that the
//     usual case well before the last bit.
//  2. The k keys ≥ T are gathered in shared memory (an atomic slot each),
//     and each is written at its rank among them, so the chunk's output
//     is sorted whatever order the atomics ran in.
//
// The first level (Part) reads the row, later ones (Merge) the previous
// level's k keys a chunk, until one chunk is left, whose level writes the
// values and indices. A Qwen3 row with k = 64 is 38 chunks, then 2,432
// keys in one. Chunks past a short row's end hold key 0, which no element
// has (it would be a negative NaN) and which sorts last.
//
// The kernels live in a package of their own for their PTX: the unrolled
// registers of three element types take 180 KB, which would crowd ops'
// own file.
package topk

import (
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

// Max is the largest k: a chunk's gathered keys live in shared memory,
// and a sampler's candidates are tens.
const Max = 128

// Threads is a block's threads; Chunk the keys one block selects from.
const (
	Threads = 256
	per     = 16
	Chunk   = per * Threads
)

//kern:kernel block=256
func partF32(t gpu.Thread, out []uint64, vals []float32, ids []int32, x []float32, cols, k, last int) {
	level(t, out, vals, ids, rowKeys(f32{}, t, x, cols), k, last)
}

//kern:kernel block=256
func partF16(t gpu.Thread, out []uint64, vals []float32, ids []int32, x []gpu.Half, cols, k, last int) {
	level(t, out, vals, ids, rowKeys(f16{}, t, x, cols), k, last)
}

//kern:kernel block=256
func partBF16(t gpu.Thread, out []uint64, vals []float32, ids []int32, x []gpu.BFloat16, cols, k, last int) {
	level(t, out, vals, ids, rowKeys(bf16{}, t, x, cols), k, last)
}

// merge is a later level over the row's n keys of the level before.
//
//kern:kernel block=256
func merge(t gpu.Thread, out []uint64, vals []float32, ids []int32, in []uint64, n, k, last int) {
	var key [per]uint64
	row, lo := t.BlockIdx().X, t.BlockIdx().Y*Chunk
	//kern:unroll
	for e := 0; e < per; e++ {
		key[e] = 0
		if j := lo + t.ThreadIdx().X + e*Threads; j < n {
			key[e] = in[row*n+j]
		}
	}
	level(t, out, vals, ids, key, k, last)
}

// Part is the first level's kernel by element type: float32, gpu.Half,
// gpu.BFloat16; Merge the later levels'. Both take (out, vals, ids, in,
// n, k, last) over a grid of (rows, chunks) blocks of Threads.
var (
	Part  = [3]*kern.Kernel{partF32Kernel.Kernel(), partF16Kernel.Kernel(), partBF16Kernel.Kernel()}
	Merge = mergeKernel.Kernel()
)

type f32 struct{}
type f16 struct{}
type bf16 struct{}

func (f32) load(x float32) float32       { return x }
func (f16) load(x gpu.Half) float32      { return x.Float32() }
func (bf16) load(x gpu.BFloat16) float32 { return x.Float32() }

type loader[T any] interface{ load(T) float32 }

// rowKeys loads the keys of chunk BlockIdx.Y of row BlockIdx.X of x.
func rowKeys[T any, L loader[T]](l L, t gpu.Thread, x []T, cols int) [per]uint64 {
	var key [per]uint64
	row, lo := t.BlockIdx().X, t.BlockIdx().Y*Chunk
	//kern:unroll
	for e := 0; e < per; e++ {
		key[e] = 0
		if j := lo + t.ThreadIdx().X + e*Threads; j < cols {
			v := l.load(x[row*cols+j])
			if v != v {
				v = math.Float32frombits(0xff800000) // -Inf
			}
			key[e] = uint64(orderKey(v))<<32 | uint64(^uint32(j))
		}
	}
	return key
}

// orderKey maps float32 to uint32 preserving order: negative values have
// all bits flipped, the others their sign bit set.
func orderKey(v float32) uint32 {
	b := math.Float32bits(v)
	if b&0x80000000 != 0 {
		return ^b
	}
	return b | 0x80000000
}

// keyValue inverts orderKey on a key's upper half.
func keyValue(key uint64) float32 {
	b := uint32(key >> 32)
	if b&0x80000000 != 0 {
		return math.Float32frombits(b &^ 0x80000000)
	}
	return math.Float32frombits(^b)
}

// level writes the chunk's k largest keys, sorted, at
// out[(row·chunks + chunk)·k:], or, when last is set (one chunk a row),
// their values and indices at vals[row·k:] and ids[row·k:].
func level(t gpu.Thread, out []uint64, vals []float32, ids []int32, key [per]uint64, k, last int) {
	sel := gpu.Shared[uint64](t, Max)
	slot := gpu.Shared[int32](t, 1)
	tid := t.ThreadIdx().X
	if tid == 0 {
		slot[0] = 0
	}
	if tid < k {
		sel[tid] = 0 // what a chunk of fewer than k real keys leaves
	}
	t.Sync()
	// Keep the keys ≥ thr; have is how many are.
	thr, have := uint64(0), int32(Chunk)
	for bit := 63; bit >= 0 && have != int32(k); bit-- {
		cand := thr | uint64(1)<<bit
		n := int32(0)
		//kern:unroll
		for e := 0; e < per; e++ {
			if key[e] >= cand {
				n++
			}
		}
		if c := gpu.BlockSum(t, n); c >= int32(k) {
			thr, have = cand, c
		}
	}
	// have = k, or thr is 0 and the chunk has fewer than k real keys:
	// either way at most k nonzero keys are ≥ thr, and the padding's
	// zeros left in sel stand for the rest.
	//kern:unroll
	for e := 0; e < per; e++ {
		if key[e] >= thr && key[e] != 0 {
			sel[gpu.AtomicAdd(&slot[0], 1)] = key[e]
		}
	}
	t.Sync()
	if tid < k {
		me := sel[tid]
		rank := 0
		for j := 0; j < k; j++ {
			if o := sel[j]; o > me || o == me && j < tid {
				rank++
			}
		}
		if last != 0 {
			o := t.BlockIdx().X*k + rank
			vals[o], ids[o] = keyValue(me), int32(^uint32(me))
		} else {
			out[(t.BlockIdx().X*t.GridDim().Y+t.BlockIdx().Y)*k+rank] = me
		}
	}
}
