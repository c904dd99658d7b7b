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
//     least k keys are ≥ it. A warp counts its keys with a ballot per
//     register (every lane gets the count, no shuffles) and the block
//     adds the warps' counts behind one barrier a pass. It stops as soon
//     as exactly k keys are ≥ the threshold: distinct keys make that the
//     usual case after the bits that tell the k-th key from the next
//     (17 or 18 passes for random logits, k = 20 to 64). For k = 1 (a
//     greedy draw) T is the block's largest key, one gpu.BlockMax.
//  2. The k keys ≥ T are gathered in shared memory (an atomic slot each),
//     and each is written at its rank among them, so the chunk's output
//     is sorted whatever order the atomics ran in.
//
// The first level (Part) reads the row. Where a row's chunks·k keys fit
// one chunk, the last block of the row to finish its chunk (an arrival
// counter, as the split-K GEMVs count) merges them, in the same launch;
// otherwise further levels (Merge) run until one chunk is left. The last
// level writes the values and indices. A Qwen3 row with k = 64 is 38
// chunks, then 2,432 keys merged by the last of them. Chunks past a short
// row's end hold key 0, which no element has (it would be a negative NaN)
// and which sorts last.
//
// The kernels live in a package of their own for their PTX: the unrolled
// registers of three element types take 180 KB, which would crowd ops'
// own file.
package topk

import (
	"math"
	"math/bits"

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
	warps   = Threads / 32
	per     = 16
	Chunk   = per * Threads
)

//kern:kernel block=256
func partF32(t gpu.Thread, keys []uint64, cnt []uint32, stats []float64, vals []float32, ids []int32, res []uint64, x []float32, cols, k, fuse, lse int) {
	part(t, keys, cnt, stats, vals, ids, res, rowKeys(f32{}, t, x, cols), k, fuse, lse)
}

//kern:kernel block=256
func partF16(t gpu.Thread, keys []uint64, cnt []uint32, stats []float64, vals []float32, ids []int32, res []uint64, x []gpu.Half, cols, k, fuse, lse int) {
	part(t, keys, cnt, stats, vals, ids, res, rowKeys(f16{}, t, x, cols), k, fuse, lse)
}

//kern:kernel block=256
func partBF16(t gpu.Thread, keys []uint64, cnt []uint32, stats []float64, vals []float32, ids []int32, res []uint64, x []gpu.BFloat16, cols, k, fuse, lse int) {
	part(t, keys, cnt, stats, vals, ids, res, rowKeys(bf16{}, t, x, cols), k, fuse, lse)
}

// merge is a level after the first, over the row's n keys of the level
// before, when they are more than one chunk (k·chunks > Chunk).
//
//kern:kernel block=256
func merge(t gpu.Thread, out []uint64, vals []float32, ids []int32, res []uint64, in []uint64, n, k, last int) {
	level(t, out, vals, ids, res, k, loadKeys(t, in, t.BlockIdx().X*n, n, t.BlockIdx().Y*Chunk), k, last)
}

// Part is the first level's kernel by element type (float32, gpu.Half,
// gpu.BFloat16), taking (keys, cnt, stats, vals, ids, res, x, cols, k,
// fuse, lse) over a grid of (rows, chunks) blocks of Threads. With one chunk a row
// it writes the result: the keys to res if res is not empty, else values
// to vals and indices to ids. Otherwise each block writes its chunk's k
// keys to keys, and with fuse set (chunks·k ≤ Chunk) the last block of a
// row to arrive (cnt[row] counts them, and is left at 0) merges them
// into the result. With lse set (fused or one chunk; stats holds two
// float64 a chunk), res rows are k+1 long and end with the bits of the
// row's log-sum-exp. Merge takes (out, vals, ids, res, in, n, k, last)
// for the levels after an unfused first.
var (
	Part  = [3]*kern.Kernel{partF32Kernel.Kernel(), partF16Kernel.Kernel(), partBF16Kernel.Kernel()}
	Merge = mergeKernel.Kernel()
)

// part is the first level and, fused, the last. With lse set, res rows
// are k+1 long and end with the bits of the row's log-sum-exp (float64):
// each block sums its chunk's exp(x − max) and the last merges the sums.
func part(t gpu.Thread, keys []uint64, cnt []uint32, stats []float64, vals []float32, ids []int32, res []uint64, key [per]uint64, k, fuse, lse int) {
	chunks := t.GridDim().Y
	row, tid := t.BlockIdx().X, t.ThreadIdx().X
	last := 0
	if chunks == 1 {
		last = 1
	}
	stride := k + lse
	level(t, keys, vals, ids, res, stride, key, k, last)
	if lse != 0 {
		m, s := chunkMass(t, key)
		if tid == 0 && last != 0 {
			res[row*stride+k] = math.Float64bits(m + math.Log(s))
		} else if tid == 0 {
			o := 2 * (row*chunks + t.BlockIdx().Y)
			stats[o], stats[o+1] = m, s
		}
	}
	if last != 0 || fuse == 0 {
		return
	}
	// The last block of the row to arrive merges the row's chunks·k keys.
	// Its threads' stores come before thread 0's fence and arrival (the
	// barrier), and the last arrival fences again before any thread reads
	// the other blocks' keys.
	flag := gpu.Shared[int32](t, 1)
	t.Sync()
	if tid == 0 {
		gpu.ThreadFence(t)
		arrived := int32(0)
		if gpu.AtomicAdd(&cnt[row], 1) == uint32(chunks-1) {
			gpu.AtomicExch(&cnt[row], 0) // ready for the next launch
			arrived = 1
		}
		gpu.ThreadFence(t)
		flag[0] = arrived
	}
	t.Sync()
	if flag[0] == 0 {
		return
	}
	n := chunks * k
	level(t, keys, vals, ids, res, stride, loadKeys(t, keys, row*n, n, 0), k, 1)
	if lse != 0 {
		// max over the chunks, then Σ s·exp(m − max), both in fixed
		// orders: the result does not depend on which block was last.
		m := negInf64()
		for j := tid; j < chunks; j += Threads {
			m = max(m, stats[2*(row*chunks+j)])
		}
		m = gpu.BlockMax(t, m)
		s := 0.0
		for j := tid; j < chunks; j += Threads {
			if cs := stats[2*(row*chunks+j)+1]; cs != 0 {
				s += cs * math.Exp(stats[2*(row*chunks+j)]-m)
			}
		}
		s = gpu.BlockSum(t, s)
		if tid == 0 {
			res[row*stride+k] = math.Float64bits(m + math.Log(s))
		}
	}
}

// chunkMass is the chunk's largest value m and Σ exp(x − m) over its
// finite values, in float64, to every thread: (-Inf, 0) for a chunk with
// none.
func chunkMass(t gpu.Thread, key [per]uint64) (float64, float64) {
	mk := key[0]
	//kern:unroll
	for e := 1; e < per; e++ {
		mk = max(mk, key[e])
	}
	m := float64(keyValue(gpu.BlockMax(t, mk)))
	s := 0.0
	//kern:unroll
	for e := 0; e < per; e++ {
		if v := float64(keyValue(key[e])); key[e] != 0 && v > negInf64() {
			s += math.Exp(v - m)
		}
	}
	return m, gpu.BlockSum(t, s)
}

// negInf64 is float64 -Inf.
func negInf64() float64 { return math.Float64frombits(0xfff0000000000000) }

// loadKeys loads keys[base+lo+j] for the block's j < Chunk, 0 at and past n−lo.
func loadKeys(t gpu.Thread, keys []uint64, base, n, lo int) [per]uint64 {
	var key [per]uint64
	//kern:unroll
	for e := 0; e < per; e++ {
		key[e] = 0
		if j := lo + t.ThreadIdx().X + e*Threads; j < n {
			key[e] = keys[base+j]
		}
	}
	return key
}

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

// Pair is a result key's value and index.
func Pair(key uint64) (float32, int32) { return keyValue(key), int32(^uint32(key)) }

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
// at res[row·stride:] if res is not empty, else their values and indices
// at vals[row·k:] and ids[row·k:].
func level(t gpu.Thread, out []uint64, vals []float32, ids []int32, res []uint64, stride int, key [per]uint64, k, last int) {
	sel := gpu.Shared[uint64](t, Max)
	slot := gpu.Shared[int32](t, 1)
	tid := t.ThreadIdx().X
	if tid == 0 {
		slot[0] = 0
	}
	if tid < Max {
		sel[tid] = 0 // what a chunk of fewer than k real keys leaves
	}
	t.Sync()
	// Keep the keys ≥ thr; have is how many are. A pass counts a warp's
	// keys ≥ the candidate with a ballot per register (every lane gets
	// the warp's count, no shuffles), and the block's with one barrier:
	// the warps' counts alternate between two halves of counts, and a
	// warp cannot write a half again before every warp has passed the
	// barrier after reading it.
	counts := gpu.Shared[int32](t, 2*warps)
	thr, have := uint64(0), int32(Chunk)
	if k == 1 {
		// A greedy draw's candidate: the largest key, in one reduction.
		m := key[0]
		//kern:unroll
		for e := 1; e < per; e++ {
			m = max(m, key[e])
		}
		thr, have = gpu.BlockMax(t, m), 1
	}
	for bit := 63; bit >= 0 && have != int32(k); bit-- {
		cand := thr | uint64(1)<<bit
		half := (bit & 1) * warps // provably in range: no check between the loads
		n := int32(0)
		//kern:unroll
		for e := 0; e < per; e++ {
			n += int32(bits.OnesCount32(gpu.Ballot(t, key[e] >= cand)))
		}
		if t.Lane() == 0 {
			counts[half+t.Warp()] = n
		}
		t.Sync()
		c := int32(0)
		//kern:unroll
		for w := 0; w < warps; w++ {
			c += counts[half+w]
		}
		if c >= int32(k) {
			thr, have = cand, c
		}
	}
	// have = k, or thr is 0 and the chunk has fewer than k real keys:
	// either way at most k nonzero keys are ≥ thr, and the padding's
	// zeros left in sel stand for the rest.
	//kern:unroll
	for e := 0; e < per; e++ {
		if key[e] >= thr && key[e] != 0 {
			sel[gpu.AtomicAdd(&slot[0], 1)&(Max-1)] = key[e] // < k ≤ Max: the mask only proves it
		}
	}
	t.Sync()
	if tid < k {
		// The rank among the gathered keys, four a step: j+u < Max is
		// proven, so the loads issue together.
		me := sel[tid]
		rank := 0
		for j := 0; j < Max && j < k; j += 4 {
			//kern:unroll
			for u := 0; u < 4; u++ {
				if o := sel[j+u]; j+u < k && (o > me || o == me && j+u < tid) {
					rank++
				}
			}
		}
		if last != 0 && len(res) != 0 {
			res[t.BlockIdx().X*stride+rank] = me
		} else if o := t.BlockIdx().X*k + rank; last != 0 {
			vals[o], ids[o] = keyValue(me), int32(^uint32(me))
		} else {
			out[(t.BlockIdx().X*t.GridDim().Y+t.BlockIdx().Y)*k+rank] = me
		}
	}
}
