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
	buf(s, "vals", vals, rows*k, "rows×k")
	buf(s, "ids", ids, rows*k, "rows×k")
	if s.err != nil || rows == 0 {
		return s.err
	}
	// The levels: chunks[i] blocks a row, each leaving k keys.
	chunks := []int{(cols + topk.Chunk - 1) / topk.Chunk}
	fuse := 0
	if c := chunks[0]; c > 1 && c*k <= topk.Chunk {
		fuse = 1
	}
	for c := chunks[0]; c > 1 && fuse == 0; {
		c = (c*k + topk.Chunk - 1) / topk.Chunk
		chunks = append(chunks, c)
		if c == 1 {
			break
		}
	}
	// Level i's keys at offs[i] of the scratch, 256-byte aligned views.
	offs := make([]int, len(chunks)+1)
	for i, c := range chunks {
		offs[i+1] = offs[i] + (rows*c*k+31)/32*32
	}
	sc, unlock, err := topkBufs(q, x.Device(), offs[len(chunks)], rows)
	if err != nil {
		return fmt.Errorf("ops.TopK: %w", err)
	}
	defer unlock()
	level := func(i int) (*kern.Buffer[uint64], error) {
		return sc.keys.Slice(offs[i], offs[i]+rows*chunks[i]*k)
	}
	grid := func(c int) kern.Grid {
		return kern.Blocks(gpu.Dim3{X: rows, Y: c, Z: 1}, gpu.Dim3{X: topk.Threads, Y: 1, Z: 1})
	}
	keys, err := level(0)
	if err != nil {
		return fmt.Errorf("ops.TopK: %w", err)
	}
	if err := s.launch(topk.Part[dtypeIndex[T]()], q, grid(chunks[0]), bufArg(keys), bufArg(sc.cnt), bufArg(vals), bufArg(ids), bufArg(x), intArg(cols), intArg(k), intArg(fuse)); err != nil {
		return err
	}
	for i := 1; i < len(chunks); i++ {
		out, err := level(i)
		if err != nil {
			return fmt.Errorf("ops.TopK: %w", err)
		}
		last := 0
		if chunks[i] == 1 {
			last = 1
		}
		if err := s.launch(topk.Merge, q, grid(chunks[i]), bufArg(out), bufArg(vals), bufArg(ids), bufArg(keys), intArg(chunks[i-1]*k), intArg(k), intArg(last)); err != nil {
			return err
		}
		keys = out
	}
	return nil
}

// topkScratch is one queue's TopK scratch: every level's keys, and a
// row's arrival counter (zero between launches).
type topkScratch struct {
	mu   sync.Mutex
	keys *kern.Buffer[uint64]
	cnt  *kern.Buffer[uint32]
}

var topkScratches sync.Map // kern.Queue → *topkScratch

// topkBufs returns q's scratch with room for nk keys and rows counters,
// locked until unlock (gemv3Bufs's discipline): a decode step calls TopK
// every token, where an allocation and a free each time would cost more
// than the kernel.
func topkBufs(q kern.Queue, dev *kern.Device, nk, rows int) (sc *topkScratch, unlock func(), err error) {
	v, ok := topkScratches.Load(q)
	if !ok {
		v, _ = topkScratches.LoadOrStore(q, &topkScratch{})
	}
	sc = v.(*topkScratch)
	sc.mu.Lock()
	if sc.keys != nil && (sc.keys.Len() < nk || sc.cnt.Len() < rows || sc.keys.Device() != dev) {
		// Earlier launches on q may still read the old scratch.
		if err := queueSync(q); err != nil {
			sc.mu.Unlock()
			return nil, nil, fmt.Errorf("growing the scratch: %w", err)
		}
		if sc.keys.Device() == dev {
			nk, rows = max(nk, sc.keys.Len()), max(rows, sc.cnt.Len())
		}
		sc.keys.Free()
		sc.cnt.Free()
		sc.keys, sc.cnt = nil, nil
	}
	if sc.keys == nil {
		keys, err := kern.Alloc[uint64](dev, nk)
		if err != nil {
			sc.mu.Unlock()
			return nil, nil, fmt.Errorf("the scratch: %w", err)
		}
		cnt, err := kern.Alloc[uint32](dev, rows) // zeroed: no arrivals
		if err != nil {
			keys.Free()
			sc.mu.Unlock()
			return nil, nil, fmt.Errorf("the scratch: %w", err)
		}
		sc.keys, sc.cnt = keys, cnt
	}
	return sc, sc.mu.Unlock, nil
}
