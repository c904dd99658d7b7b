package ops

// The k largest elements of each row, largest first: the candidates a
// sampler draws from (llm/engine hands the host these k pairs per
// sequence instead of a whole row of logits).
//
// Shapes: x [rows, cols] row-major, T ∈ {float32, float16, bfloat16};
// vals [rows, k] float32 and ids [rows, k] int32; 1 ≤ k ≤ TopKMax and
// k ≤ cols. Order: larger first, equal values by lower index first (the
// first k of llm/sample's order); NaN counts as -Inf. The kernels and the
// algorithm (a bitwise threshold search per chunk of 4096, then merges of
// the chunks' k keys) are in ops/internal/topk.
//
// Versions: v1 only.

import (
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
	dev := x.Device()
	grid := func(chunks int) kern.Grid {
		return kern.Blocks(gpu.Dim3{X: rows, Y: chunks, Z: 1}, gpu.Dim3{X: topk.Threads, Y: 1, Z: 1})
	}
	last := func(chunks int) kern.Arg {
		if chunks == 1 {
			return intArg(1)
		}
		return intArg(0)
	}
	chunks := (cols + topk.Chunk - 1) / topk.Chunk
	keys, err := scratch[uint64](s, dev, rows*chunks*k)
	if err != nil {
		return err
	}
	defer keys.Free()
	if err := s.launch(topk.Part[dtypeIndex[T]()], q, grid(chunks), bufArg(keys), bufArg(vals), bufArg(ids), bufArg(x), intArg(cols), intArg(k), last(chunks)); err != nil {
		return err
	}
	// Each level leaves chunks·k keys a row; merge them until one chunk.
	for in := keys; chunks > 1; {
		n := chunks * k
		chunks = (n + topk.Chunk - 1) / topk.Chunk
		next, err := scratch[uint64](s, dev, rows*chunks*k)
		if err != nil {
			return err
		}
		defer next.Free()
		if err := s.launch(topk.Merge, q, grid(chunks), bufArg(next), bufArg(vals), bufArg(ids), bufArg(in), intArg(n), intArg(k), last(chunks)); err != nil {
			return err
		}
		in = next
	}
	return nil
}
