package ops

// Argmax over the last dimension: out[r] = the index of the largest
// element of row r (the greedy decoding step over a vocabulary).
//
// Shapes: x [rows, cols] row-major, T ∈ {float32, float16, bfloat16};
// out [rows] int32. Ties go to the lowest index, so the result does not
// depend on the block shape or the order the hardware runs blocks in. NaN
// counts as larger than every number (the first NaN wins), as in PyTorch
// and NumPy; -Inf is an ordinary value.
//
// Versions:
//
//	v1 block per row: one block of 256 threads strides over the row,
//	   each thread keeps its best (value, index) pair, and the pairs meet
//	   in a block arg-reduction (warp shuffles of both halves, then 32
//	   words of shared memory). A 150k vocabulary on one block leaves all
//	   but one SM idle when decoding a single sequence, hence:
//	v2 two stages: stage 1 splits each row into chunks of 4096 elements
//	   (16 per thread), one block per (chunk, row), and writes each
//	   chunk's best pair to a [rows, chunks] scratch; stage 2 is v1 over
//	   those pairs, one block per row. A 151936-entry Qwen vocabulary
//	   becomes 38 blocks, then one.
//
// Argmax uses v1 for rows of at most one chunk and v2 above.

import (
	"fmt"
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// argChunk is the elements of a row one stage-1 block covers.
const argChunk = 16 * maxRowThreads

// maxArgCols is the longest row: stage 1's chunks are the grid's y
// dimension, at most 65535.
const maxArgCols = 65535 * argChunk

// ---------------------------------------------------------------------------
// kernels

//kern:kernel block=256
func argmaxPartF32(t gpu.Thread, bestVal []float32, bestIdx []int32, x []float32, cols, chunk int) {
	argmaxPart(f32c{}, t, bestVal, bestIdx, x, cols, chunk)
}

//kern:kernel block=256
func argmaxPartF16(t gpu.Thread, bestVal []float32, bestIdx []int32, x []gpu.Half, cols, chunk int) {
	argmaxPart(f16c{}, t, bestVal, bestIdx, x, cols, chunk)
}

//kern:kernel block=256
func argmaxPartBF16(t gpu.Thread, bestVal []float32, bestIdx []int32, x []gpu.BFloat16, cols, chunk int) {
	argmaxPart(bf16c{}, t, bestVal, bestIdx, x, cols, chunk)
}

// argmaxPart is stage 1 (and, with one chunk per row, v1): block (r, c)
// reduces elements [c·chunk, (c+1)·chunk) of row r and writes the pair
// at r·GridDim.Y + c.
func argmaxPart[T any, C codec[T]](c C, t gpu.Thread, bestVal []float32, bestIdx []int32, x []T, cols, chunk int) {
	row, part := t.BlockIdx().X, t.BlockIdx().Y
	lo := part * chunk
	hi := min(lo+chunk, cols)
	v, k := negInf(), int32(math.MaxInt32)
	for j := lo + t.ThreadIdx().X; j < hi; j += t.BlockDim().X {
		if w := c.load(x[row*cols+j]); argBetter(w, int32(j), v, k) {
			v, k = w, int32(j)
		}
	}
	v, k = blockArgMax(t, v, k)
	if t.ThreadIdx().X == 0 {
		o := row*t.GridDim().Y + part
		bestVal[o], bestIdx[o] = v, k
	}
}

// argmaxFinal is stage 2: block r reduces the parts pairs of row r.
//
//kern:kernel block=256
func argmaxFinal(t gpu.Thread, out []int32, bestVal []float32, bestIdx []int32, parts int) {
	row := t.BlockIdx().X
	v, k := negInf(), int32(math.MaxInt32)
	for j := t.ThreadIdx().X; j < parts; j += t.BlockDim().X {
		if w, wk := bestVal[row*parts+j], bestIdx[row*parts+j]; argBetter(w, wk, v, k) {
			v, k = w, wk
		}
	}
	_, k = blockArgMax(t, v, k)
	if t.ThreadIdx().X == 0 {
		out[row] = k
	}
}

// argBetter reports whether value v at index i beats value w at index j:
// NaN beats numbers, a larger value wins, and equal values go to the
// lower index.
func argBetter(v float32, i int32, w float32, j int32) bool {
	switch {
	case v != v:
		return w == w || i < j
	case w != w:
		return false
	}
	return v > w || v == w && i < j
}

// ---------------------------------------------------------------------------
// Go API

var argmaxPartK = kset{argmaxPartF32Kernel.Kernel(), argmaxPartF16Kernel.Kernel(), argmaxPartBF16Kernel.Kernel()}

// Argmax writes to out[r] the index of the largest element of row r of x
// ([rows, cols]); ties go to the lowest index, and NaN wins over numbers.
func Argmax[T Float](q kern.Queue, out *kern.Buffer[int32], x *kern.Buffer[T], rows, cols int) error {
	v := 1
	if cols > argChunk {
		v = 2
	}
	return argmax(v, q, out, x, rows, cols)
}

func argmax[T Float](version int, q kern.Queue, out *kern.Buffer[int32], x *kern.Buffer[T], rows, cols int) error {
	s := newShape("ops.Argmax")
	n := rowsCols(s, rows, cols)
	if cols > maxArgCols {
		s.fail("cols = %d, want at most %d (int32 indices, 65535 chunks)", cols, maxArgCols)
	}
	buf(s, "x", x, n, "rows×cols")
	buf(s, "out", out, rows, "rows")
	if s.err != nil || rows == 0 {
		return s.err
	}
	dev := x.Device()
	part := pick[T](argmaxPartK)
	if version == 1 {
		val, err := scratch[float32](s, dev, rows)
		if err != nil {
			return err
		}
		defer val.Free()
		return s.launch(part, q, kern.Blocks(gpu.Dim3{X: rows, Y: 1, Z: 1}, gpu.Dim3{X: rowThreads(cols), Y: 1, Z: 1}),
			bufArg(val), bufArg(out), bufArg(x), intArg(cols), intArg(cols))
	}
	parts := (cols + argChunk - 1) / argChunk
	val, err := scratch[float32](s, dev, rows*parts)
	if err != nil {
		return err
	}
	defer val.Free()
	idx, err := scratch[int32](s, dev, rows*parts)
	if err != nil {
		return err
	}
	defer idx.Free()
	grid := kern.Blocks(gpu.Dim3{X: rows, Y: parts, Z: 1}, gpu.Dim3{X: rowThreads(min(cols, argChunk)), Y: 1, Z: 1})
	if err := s.launch(part, q, grid, bufArg(val), bufArg(idx), bufArg(x), intArg(cols), intArg(argChunk)); err != nil {
		return err
	}
	return s.launch(argmaxFinalKernel.Kernel(), q, blocks1(rows, rowThreads(parts)), bufArg(out), bufArg(val), bufArg(idx), intArg(parts))
}

// scratch allocates a temporary buffer for an op.
func scratch[T gpu.Elem](s *shape, dev *kern.Device, n int) (*kern.Buffer[T], error) {
	buf, err := kern.Alloc[T](dev, n)
	if err != nil {
		return nil, fmt.Errorf("%s: scratch: %w", s.op, err)
	}
	return buf, nil
}
