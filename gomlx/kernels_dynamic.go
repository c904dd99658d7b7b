package gomlx

// DynamicSlice and DynamicUpdateSlice: a window of dims w at start
// positions read from the device (starts, int32, one per axis), each
// clamped to [0, D - w] as XLA defines, in a tensor of dims D and strides
// S. One thread per window element computes the element's offset in the
// big tensor; write 0 reads the window out of x (DynamicSlice: out is the
// window), write 1 writes x, the update, into out (DynamicUpdateSlice:
// out already holds a copy of the operand).
//
// meta, int32: [w(rank), D(rank), S(rank)]. Block: 256 threads.

import "github.com/gokern/kern/gpu"

func dynWindow[T any](t gpu.Thread, out, x []T, starts, meta []int32, rank, n, write int) {
	i := t.GlobalX()
	if i >= n {
		return
	}
	rem, off := i, 0
	for k := rank - 1; k >= 0; k-- {
		w := int(meta[k])
		idx := rem % w
		rem /= w
		s := int(starts[k])
		if hi := int(meta[rank+k]) - w; s > hi {
			s = hi
		}
		if s < 0 {
			s = 0
		}
		off += (s + idx) * int(meta[2*rank+k])
	}
	if write == 0 {
		out[i] = x[off]
	} else {
		out[off] = x[i]
	}
}

//kern:kernel block=256
func dynF32(t gpu.Thread, out, x []float32, starts, meta []int32, rank, n, write int) {
	dynWindow(t, out, x, starts, meta, rank, n, write)
}

//kern:kernel block=256
func dynF64(t gpu.Thread, out, x []float64, starts, meta []int32, rank, n, write int) {
	dynWindow(t, out, x, starts, meta, rank, n, write)
}

//kern:kernel block=256
func dynF16(t gpu.Thread, out, x []gpu.Half, starts, meta []int32, rank, n, write int) {
	dynWindow(t, out, x, starts, meta, rank, n, write)
}

//kern:kernel block=256
func dynBF16(t gpu.Thread, out, x []gpu.BFloat16, starts, meta []int32, rank, n, write int) {
	dynWindow(t, out, x, starts, meta, rank, n, write)
}

//kern:kernel block=256
func dynI32(t gpu.Thread, out, x []int32, starts, meta []int32, rank, n, write int) {
	dynWindow(t, out, x, starts, meta, rank, n, write)
}

//kern:kernel block=256
func dynI64(t gpu.Thread, out, x []int64, starts, meta []int32, rank, n, write int) {
	dynWindow(t, out, x, starts, meta, rank, n, write)
}

//kern:kernel block=256
func dynBool(t gpu.Thread, out, x []bool, starts, meta []int32, rank, n, write int) {
	dynWindow(t, out, x, starts, meta, rank, n, write)
}
