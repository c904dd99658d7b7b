package ops

// Softmax over the last dimension:
//
//	out[r,j] = exp(x[r,j] - max_j x[r,:]) / Σ_j exp(x[r,j] - max_j x[r,:])
//
// Shapes: x, out [rows, cols], row-major, T ∈ {float32, float16, bfloat16};
// every sum and exp is float32.
//
// Subtracting the row maximum first keeps every exp ≤ 1, so no row
// overflows however large its logits. A row is streamed by one block
// (up to 256 threads, each striding over the row, so cols may be anything
// from 1 to millions) in two passes over memory:
//
//  1. the maximum and the sum of exponentials, found together: each
//     thread keeps a running maximum m and a sum s of exp(x - m), and
//     rescales s by exp(m_old - m_new) when its maximum grows ("online"
//     softmax); the threads' pairs then meet in BlockMax, and each s is
//     rescaled to the block maximum M before BlockSum;
//  2. the write: out = exp(x - M) / S.
//
// -Inf inputs (masked positions) give 0; a row that is entirely -Inf has
// no distribution and gives NaN, as PyTorch does.
//
// Versions:
//
//	v1 three sweeps: BlockMax over the row, then BlockSum of exp(x - M),
//	   then the write. The textbook form; it reads the row three times.
//	v2 online: the max and the sum in one sweep as above, then the write;
//	   two reads of the row instead of three, for the price of an extra exp
//	   when a thread's running maximum grows (rarely, after the first few
//	   elements). Softmax uses v2.
//
// Block: one block per row, the row rounded up to whole warps, at most
// 256 threads (see rowThreads).

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// ---------------------------------------------------------------------------
// kernels

//kern:kernel block=256
func softmax3F32(t gpu.Thread, out, x []float32, cols int) { softmax3(f32c{}, t, out, x, cols) }

//kern:kernel block=256
func softmax3F16(t gpu.Thread, out, x []gpu.Half, cols int) { softmax3(f16c{}, t, out, x, cols) }

//kern:kernel block=256
func softmax3BF16(t gpu.Thread, out, x []gpu.BFloat16, cols int) { softmax3(bf16c{}, t, out, x, cols) }

// softmax3 is v1: max, sum and write in three sweeps.
func softmax3[T any, C codec[T]](c C, t gpu.Thread, out, x []T, cols int) {
	r := t.BlockIdx().X
	row, dst := x[r*cols:(r+1)*cols], out[r*cols:(r+1)*cols]
	m := negInf()
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		m = gpu.Max(m, c.load(row[j]))
	}
	m = gpu.BlockMax(t, m)
	s := float32(0)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		s += gpu.Exp(c.load(row[j]) - m)
	}
	s = gpu.BlockSum(t, s)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		dst[j] = c.store(gpu.Exp(c.load(row[j])-m) / s)
	}
}

//kern:kernel block=256
func softmaxF32(t gpu.Thread, out, x []float32, cols int) { softmaxOnline(f32c{}, t, out, x, cols) }

//kern:kernel block=256
func softmaxF16(t gpu.Thread, out, x []gpu.Half, cols int) { softmaxOnline(f16c{}, t, out, x, cols) }

//kern:kernel block=256
func softmaxBF16(t gpu.Thread, out, x []gpu.BFloat16, cols int) {
	softmaxOnline(bf16c{}, t, out, x, cols)
}

// softmaxOnline is v2: the running (max, sum) pair per thread, combined
// across the block, then the write.
func softmaxOnline[T any, C codec[T]](c C, t gpu.Thread, out, x []T, cols int) {
	base := t.BlockIdx().X * cols
	tid, nt := t.ThreadIdx().X, t.BlockDim().X
	if cols <= rowRegs*nt {
		// The row fits in registers: one read of x, then max, sum and
		// the output from the registers.
		var v [rowRegs]float32
		mx := negInf()
		//kern:unroll
		for k := 0; k < rowRegs; k++ {
			v[k] = negInf() // exp(-Inf - m) = 0 past the row's end
			if j := tid + k*nt; j < cols {
				v[k] = c.load(x[base+j])
			}
		}
		//kern:unroll
		for k := 0; k < rowRegs; k++ {
			mx = gpu.Max(mx, v[k])
		}
		mx = gpu.BlockMax(t, mx)
		sum := float32(0)
		//kern:unroll
		for k := 0; k < rowRegs; k++ {
			v[k] = gpu.Exp(v[k] - mx)
			sum += v[k]
		}
		sum = gpu.BlockSum(t, sum)
		//kern:unroll
		for k := 0; k < rowRegs; k++ {
			if j := tid + k*nt; j < cols {
				out[base+j] = c.store(v[k] / sum)
			}
		}
		return
	}
	m, s := negInf(), float32(0)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		v := c.load(x[base+j])
		if v > m {
			s = s*gpu.Exp(m-v) + 1 // m = -Inf at first: exp(-Inf) = 0
			m = v
		} else if v > negInf() {
			s += gpu.Exp(v - m)
		}
	}
	mx := gpu.BlockMax(t, m)
	if m > negInf() {
		s *= gpu.Exp(m - mx)
	}
	s = gpu.BlockSum(t, s)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		out[base+j] = c.store(gpu.Exp(c.load(x[base+j])-mx) / s)
	}
}

// ---------------------------------------------------------------------------
// Go API

var (
	softmax3K = kset{softmax3F32Kernel.Kernel(), softmax3F16Kernel.Kernel(), softmax3BF16Kernel.Kernel()}
	softmaxK  = kset{softmaxF32Kernel.Kernel(), softmaxF16Kernel.Kernel(), softmaxBF16Kernel.Kernel()}
)

// Softmax writes the softmax of each row of x ([rows, cols], row-major)
// to out ([rows, cols]).
func Softmax[T Float](q kern.Queue, out, x *kern.Buffer[T], rows, cols int) error {
	return softmax(softmaxK, "ops.Softmax", q, out, x, rows, cols)
}

func softmax[T Float](k kset, op string, q kern.Queue, out, x *kern.Buffer[T], rows, cols int) error {
	s := newShape(op)
	n := rowsCols(s, rows, cols)
	buf(s, "x", x, n, "rows×cols")
	buf(s, "out", out, n, "rows×cols")
	if s.err != nil || rows == 0 {
		return s.err
	}
	return s.launch(pick[T](k), q, blocks1(rows, rowThreads(cols)), bufArg(out), bufArg(x), intArg(cols))
}
