package ops

// The k largest elements of each row, largest first: the candidates a
// sampler draws from (llm/engine hands the host these k pairs per
// sequence instead of a whole row of logits).
//
// Shapes: x [rows, cols] row-major, T ∈ {float32, float16, bfloat16};
// vals [rows, k] float32 and ids [rows, k] int32; 1 ≤ k ≤ TopKMax and
// k ≤ cols. Order: larger first, equal values by lower index first (the
// first k of llm/sample's order); NaN counts as -Inf. The kernels and the
// algorithm (a bitwise threshold search per chunk of 4096, then a merge
// of the chunks' k keys by the last block of the row to finish) are in
// ops/internal/topk. One launch where a row's chunks·k keys fit one chunk
// (a Qwen3 vocabulary up to k = 107), one more per further level.
//
// Versions: v1 only.

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/topk"
)

// TopKMax is the largest k TopK takes.
const TopKMax = topk.Max

// TopK writes the k largest elements of each row of x ([rows, cols]) to
// vals and their column indices to ids (both [rows, k]), largest first,
// equal values by lower index first; NaN counts as -Inf.
func TopK[T Float](q kern.Queue, vals *kern.Buffer[float32], ids *kern.Buffer[int32], x *kern.Buffer[T], rows, cols, k int) error {
	s := newShape("ops.TopK")
	checkTopK(s, x, rows, cols, k)
	buf(s, "vals", vals, rows*k, "rows×k")
	buf(s, "ids", ids, rows*k, "rows×k")
	if s.err != nil || rows == 0 {
		return s.err
	}
	return topK(s, q, x, rows, cols, k, vals, ids, nil, false)
}

// TopKPacked is TopK with each (value, index) pair packed in one uint64
// of keys ([rows, k]), which TopKPair unpacks: one buffer, so one copy to
// the host where TopK's result is two.
func TopKPacked[T Float](q kern.Queue, keys *kern.Buffer[uint64], x *kern.Buffer[T], rows, cols, k int) error {
	s := newShape("ops.TopKPacked")
	checkTopK(s, x, rows, cols, k)
	buf(s, "keys", keys, rows*k, "rows×k")
	if s.err != nil || rows == 0 {
		return s.err
	}
	return topK(s, q, x, rows, cols, k, nil, nil, keys, false)
}

// TopKPair unpacks one of TopKPacked's keys: the value (NaN as -Inf) and
// its column index.
func TopKPair(key uint64) (float32, int32) { return topk.Pair(key) }

// TopKPairs unpacks every key of TopKPacked's result, in order.
func TopKPairs(keys []uint64) (vals []float32, ids []int32) {
	vals, ids = make([]float32, len(keys)), make([]int32, len(keys))
	for i, key := range keys {
		vals[i], ids[i] = topk.Pair(key)
	}
	return vals, ids
}

// TopKPackedLSE is TopKPacked with each row's log-sum-exp, log Σ_j e^x_j
// over its finite elements in float64 (what a log-softmax subtracts;
// -Inf for a row with none), after its k keys: keys is [rows, k+1], and
// math.Float64frombits(keys[r·(k+1)+k]) is row r's. The sums are taken
// per chunk of 4096 and merged in a fixed order, so they agree with a
// float64 sum over the row to about 1e-15. It needs the row's chunks' keys
// to fit one merge (TopKPackedLSEFits).
func TopKPackedLSE[T Float](q kern.Queue, keys *kern.Buffer[uint64], x *kern.Buffer[T], rows, cols, k int) error {
	s := newShape("ops.TopKPackedLSE")
	checkTopK(s, x, rows, cols, k)
	buf(s, "keys", keys, rows*(k+1), "rows×(k+1)")
	if s.err == nil && !TopKPackedLSEFits(cols, k) {
		s.fail("cols = %d and k = %d: the %d chunks' keys do not fit one merge of %d (TopKPackedLSEFits)", cols, k, topkChunks(cols), topk.Chunk)
	}
	if s.err != nil || rows == 0 {
		return s.err
	}
	return topK(s, q, x, rows, cols, k, nil, nil, keys, true)
}

// TopKPackedLSEFits reports whether TopKPackedLSE takes rows of cols with
// k: one chunk of 4096, or chunks whose k keys each fit 4096 (a Qwen3
// vocabulary of 151,936 up to k = 107).
func TopKPackedLSEFits(cols, k int) bool {
	c := topkChunks(cols)
	return c == 1 || c*k <= topk.Chunk
}

// topkChunks is the first level's chunks a row.
func topkChunks(cols int) int { return (cols + topk.Chunk - 1) / topk.Chunk }

func checkTopK[T Float](s *shape, x *kern.Buffer[T], rows, cols, k int) {
	n := rowsCols(s, rows, cols)
	switch {
	case k < 1 || k > TopKMax:
		s.fail("k = %d, want 1 ≤ k ≤ %d (ops.TopKMax)", k, TopKMax)
	case k > cols:
		s.fail("k = %d, want at most cols = %d", k, cols)
	case cols > maxArgCols:
		s.fail("cols = %d, want at most %d (int32 indices, 65535 chunks)", cols, maxArgCols)
	}
	buf(s, "x", x, n, "rows×cols")
}

// TopKReserve makes the scratch TopK, TopKPacked and TopKPackedLSE use on
// q hold a call of rows and cols with k, allocating now what such a call
// would: before a Stream.Capture whose launches call them, since a
// capture must not allocate.
func TopKReserve(q kern.Queue, rows, cols, k int) error {
	dev := queueDevice(q)
	if dev == nil || rows < 1 || cols < 1 || k < 1 || k > TopKMax {
		return fmt.Errorf("ops.TopKReserve: %d rows of %d with k = %d on %v: want a queue and positive sizes, k ≤ %d", rows, cols, k, q, TopKMax)
	}
	chunks, offs := topkLevels(rows, cols, k)
	_, unlock, err := topkBufs(q, dev, offs[len(chunks)], rows, 2*rows*chunks[0])
	if err != nil {
		return fmt.Errorf("ops.TopKReserve: %w", err)
	}
	unlock()
	return nil
}

// topkLevels is each level's chunks a row and the offset of its keys in
// the scratch (256-byte aligned), then the keys in all: one level when
// the last block of a row can merge its chunks (TopKPackedLSEFits).
func topkLevels(rows, cols, k int) (chunks, offs []int) {
	chunks = []int{topkChunks(cols)}
	for c := chunks[0]; c > 1 && !TopKPackedLSEFits(cols, k); {
		c = (c*k + topk.Chunk - 1) / topk.Chunk
		chunks = append(chunks, c)
	}
	offs = make([]int, len(chunks)+1)
	for i, c := range chunks {
		offs[i+1] = offs[i] + (rows*c*k+31)/32*32
	}
	return chunks, offs
}

// topK launches the levels on checked arguments, the result to res if it
// is not nil, else to vals and ids; with lse, res rows end with the row's
// log-sum-exp.
func topK[T Float](s *shape, q kern.Queue, x *kern.Buffer[T], rows, cols, k int, vals *kern.Buffer[float32], ids *kern.Buffer[int32], res *kern.Buffer[uint64], lse bool) error {
	// The levels: chunks[i] blocks a row, each leaving k keys at offs[i]
	// of the scratch; one level of several chunks merges them in its last
	// block.
	chunks, offs := topkLevels(rows, cols, k)
	fuse := 0
	if len(chunks) == 1 && chunks[0] > 1 {
		fuse = 1
	}
	sc, unlock, err := topkBufs(q, x.Device(), offs[len(chunks)], rows, 2*rows*chunks[0])
	if err != nil {
		return fmt.Errorf("%s: %w", s.op, err)
	}
	defer unlock()
	if res == nil {
		res = sc.noKeys
	} else {
		vals, ids = sc.noVals, sc.noIDs
	}
	level := func(i int) (*kern.Buffer[uint64], error) {
		return sc.keys.Slice(offs[i], offs[i]+rows*chunks[i]*k)
	}
	grid := func(c int) kern.Grid {
		return kern.Blocks(gpu.Dim3{X: rows, Y: c, Z: 1}, gpu.Dim3{X: topk.Threads, Y: 1, Z: 1})
	}
	keys, err := level(0)
	if err != nil {
		return fmt.Errorf("%s: %w", s.op, err)
	}
	withLSE := 0
	if lse {
		withLSE = 1
	}
	if err := s.launch(topk.Part[dtypeIndex[T]()], q, grid(chunks[0]), bufArg(keys), bufArg(sc.cnt), bufArg(sc.stats), bufArg(vals), bufArg(ids), bufArg(res), bufArg(x), intArg(cols), intArg(k), intArg(fuse), intArg(withLSE)); err != nil {
		return err
	}
	for i := 1; i < len(chunks); i++ {
		out, err := level(i)
		if err != nil {
			return fmt.Errorf("%s: %w", s.op, err)
		}
		last := 0
		if chunks[i] == 1 {
			last = 1
		}
		if err := s.launch(topk.Merge, q, grid(chunks[i]), bufArg(out), bufArg(vals), bufArg(ids), bufArg(res), bufArg(keys), intArg(chunks[i-1]*k), intArg(k), intArg(last)); err != nil {
			return err
		}
		keys = out
	}
	return nil
}

// topkScratch is one queue's TopK scratch: every level's keys, and a
// row's arrival counter (zero between launches).
type topkScratch struct {
	mu    sync.Mutex
	keys  *kern.Buffer[uint64]
	cnt   *kern.Buffer[uint32]
	stats *kern.Buffer[float64] // each chunk's (max, Σ exp) for TopKPackedLSE
	// Empty stand-ins for the outputs a call does not write.
	noKeys *kern.Buffer[uint64]
	noVals *kern.Buffer[float32]
	noIDs  *kern.Buffer[int32]
}

var topkScratches sync.Map // kern.Queue → *topkScratch

// topkBufs returns q's scratch with room for nk keys, rows counters and
// ns chunk statistics, locked until unlock (gemv3Bufs's discipline): a
// decode step calls TopK every token, where an allocation and a free each
// time would cost more than the kernel.
func topkBufs(q kern.Queue, dev *kern.Device, nk, rows, ns int) (sc *topkScratch, unlock func(), err error) {
	v, ok := topkScratches.Load(q)
	if !ok {
		v, _ = topkScratches.LoadOrStore(q, &topkScratch{})
	}
	sc = v.(*topkScratch)
	sc.mu.Lock()
	if sc.keys != nil && (sc.keys.Len() < nk || sc.cnt.Len() < rows || sc.stats.Len() < ns || sc.keys.Device() != dev) {
		// Earlier launches on q may still read the old scratch.
		if err := queueSync(q); err != nil {
			sc.mu.Unlock()
			return nil, nil, fmt.Errorf("growing the scratch: %w", err)
		}
		if sc.keys.Device() == dev {
			nk, rows, ns = max(nk, sc.keys.Len()), max(rows, sc.cnt.Len()), max(ns, sc.stats.Len())
		}
		sc.free()
	}
	if sc.keys == nil {
		var errs [6]error
		sc.keys, errs[0] = kern.Alloc[uint64](dev, nk)
		sc.cnt, errs[1] = kern.Alloc[uint32](dev, rows) // zeroed: no arrivals
		sc.stats, errs[2] = kern.Alloc[float64](dev, ns)
		sc.noKeys, errs[3] = kern.Alloc[uint64](dev, 0)
		sc.noVals, errs[4] = kern.Alloc[float32](dev, 0)
		sc.noIDs, errs[5] = kern.Alloc[int32](dev, 0)
		if err := errors.Join(errs[:]...); err != nil {
			sc.free()
			sc.mu.Unlock()
			return nil, nil, fmt.Errorf("the scratch: %w", err)
		}
	}
	return sc, sc.mu.Unlock, nil
}

// free frees the scratch's buffers (sc.mu held).
func (sc *topkScratch) free() {
	if sc.keys != nil {
		sc.keys.Free()
	}
	if sc.cnt != nil {
		sc.cnt.Free()
	}
	if sc.stats != nil {
		sc.stats.Free()
	}
	if sc.noKeys != nil {
		sc.noKeys.Free()
	}
	if sc.noVals != nil {
		sc.noVals.Free()
	}
	if sc.noIDs != nil {
		sc.noIDs.Free()
	}
	sc.keys, sc.cnt, sc.stats, sc.noKeys, sc.noVals, sc.noIDs = nil, nil, nil, nil, nil, nil
}
