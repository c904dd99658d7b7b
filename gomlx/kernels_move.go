package gomlx

// Data-movement kernels: one body per job, generic over the element's
// storage type, with a one-line kernel per stored dtype (float32,
// float16, bfloat16, int32, int64, bool). None of them computes on the
// values, so each body only moves T values from a load to a store (kern
// cannot yet declare a local of a type parameter's type).
//
//	copyStrided  out[dstOff + Σ idx·dstStride] = x[srcOff + Σ idx·srcStride]
//	             over the index space dims; one thread per element of it.
//	             Transpose, broadcast (stride 0), slice (stride·step),
//	             reverse (negative stride), concatenate and pad (dstOff,
//	             dstStride) and reshape are all this one kernel.
//	fill         out[i] = v[0] (v on the device, so Pad's fill value
//	             never visits the host)
//	where        out[i] = cond[i·cs] ? a[i·as] : b[i·bs], cs/as/bs ∈ {0, 1}
//	             (0 broadcasts a scalar operand)
//	gather       XLA Gather, see gather.go for the meta layout.
//
// meta holds int32 [dims(rank), srcStrides(rank), dstStrides(rank)],
// uploaded once when the graph is compiled. Block: 256 threads, one
// element per thread.

import "github.com/gokern/kern/gpu"

func copyStrided[T any](t gpu.Thread, out, x []T, meta []int32, rank, n, srcOff, dstOff int) {
	i := t.GlobalX()
	if i >= n {
		return
	}
	rem, so, do := i, srcOff, dstOff
	for k := rank - 1; k >= 0; k-- {
		d := int(meta[k])
		idx := rem % d
		rem /= d
		so += idx * int(meta[rank+k])
		do += idx * int(meta[2*rank+k])
	}
	out[do] = x[so]
}

//kern:kernel block=256
func copyF32(t gpu.Thread, out, x []float32, meta []int32, rank, n, srcOff, dstOff int) {
	copyStrided(t, out, x, meta, rank, n, srcOff, dstOff)
}

//kern:kernel block=256
func copyF16(t gpu.Thread, out, x []gpu.Half, meta []int32, rank, n, srcOff, dstOff int) {
	copyStrided(t, out, x, meta, rank, n, srcOff, dstOff)
}

//kern:kernel block=256
func copyBF16(t gpu.Thread, out, x []gpu.BFloat16, meta []int32, rank, n, srcOff, dstOff int) {
	copyStrided(t, out, x, meta, rank, n, srcOff, dstOff)
}

//kern:kernel block=256
func copyI32(t gpu.Thread, out, x []int32, meta []int32, rank, n, srcOff, dstOff int) {
	copyStrided(t, out, x, meta, rank, n, srcOff, dstOff)
}

//kern:kernel block=256
func copyI64(t gpu.Thread, out, x []int64, meta []int32, rank, n, srcOff, dstOff int) {
	copyStrided(t, out, x, meta, rank, n, srcOff, dstOff)
}

//kern:kernel block=256
func copyBool(t gpu.Thread, out, x []bool, meta []int32, rank, n, srcOff, dstOff int) {
	copyStrided(t, out, x, meta, rank, n, srcOff, dstOff)
}

func fill[T any](t gpu.Thread, out, v []T) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = v[0]
	}
}

//kern:kernel block=256
func fillF32(t gpu.Thread, out, v []float32) { fill(t, out, v) }

//kern:kernel block=256
func fillF16(t gpu.Thread, out, v []gpu.Half) { fill(t, out, v) }

//kern:kernel block=256
func fillBF16(t gpu.Thread, out, v []gpu.BFloat16) { fill(t, out, v) }

//kern:kernel block=256
func fillI32(t gpu.Thread, out, v []int32) { fill(t, out, v) }

//kern:kernel block=256
func fillI64(t gpu.Thread, out, v []int64) { fill(t, out, v) }

//kern:kernel block=256
func fillBool(t gpu.Thread, out, v []bool) { fill(t, out, v) }

func where[T any](t gpu.Thread, out []T, cond []bool, a, b []T, cs, as, bs int) {
	if i := t.GlobalX(); i < len(out) {
		if cond[i*cs] {
			out[i] = a[i*as]
		} else {
			out[i] = b[i*bs]
		}
	}
}

//kern:kernel block=256
func whereF32(t gpu.Thread, out []float32, cond []bool, a, b []float32, cs, as, bs int) {
	where(t, out, cond, a, b, cs, as, bs)
}

//kern:kernel block=256
func whereF16(t gpu.Thread, out []gpu.Half, cond []bool, a, b []gpu.Half, cs, as, bs int) {
	where(t, out, cond, a, b, cs, as, bs)
}

//kern:kernel block=256
func whereBF16(t gpu.Thread, out []gpu.BFloat16, cond []bool, a, b []gpu.BFloat16, cs, as, bs int) {
	where(t, out, cond, a, b, cs, as, bs)
}

//kern:kernel block=256
func whereI32(t gpu.Thread, out []int32, cond []bool, a, b []int32, cs, as, bs int) {
	where(t, out, cond, a, b, cs, as, bs)
}

//kern:kernel block=256
func whereI64(t gpu.Thread, out []int64, cond []bool, a, b []int64, cs, as, bs int) {
	where(t, out, cond, a, b, cs, as, bs)
}

//kern:kernel block=256
func whereBool(t gpu.Thread, out []bool, cond []bool, a, b []bool, cs, as, bs int) {
	where(t, out, cond, a, b, cs, as, bs)
}

// gatherAt is XLA Gather for one output element (see ops_gather.go for
// how the builder flattens the op's axes into meta): meta is int32
// [outDims(rank), operandStride(rank), indexStride(rank),
// startStride(nIdx), maxStart(nIdx)]. An output index splits into an
// offset into the operand window (Σ idx·operandStride) and the position
// of its start vector in idx (Σ idx·indexStride); start k, clamped to
// [0, maxStart[k]] as XLA does, moves the window by startStride[k].
func gatherAt[T any](t gpu.Thread, out, x []T, idx, meta []int32, rank, nIdx, idxStride int) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	rem, off, base := i, 0, 0
	for k := rank - 1; k >= 0; k-- {
		d := int(meta[k])
		j := rem % d
		rem /= d
		off += j * int(meta[rank+k])
		base += j * int(meta[2*rank+k])
	}
	for k := 0; k < nIdx; k++ {
		s := int(idx[base+k*idxStride])
		hi := int(meta[3*rank+nIdx+k])
		if s < 0 {
			s = 0
		}
		if s > hi {
			s = hi
		}
		off += s * int(meta[3*rank+k])
	}
	out[i] = x[off]
}

//kern:kernel block=256
func gatherF32(t gpu.Thread, out, x []float32, idx, meta []int32, rank, nIdx, idxStride int) {
	gatherAt(t, out, x, idx, meta, rank, nIdx, idxStride)
}

//kern:kernel block=256
func gatherF16(t gpu.Thread, out, x []gpu.Half, idx, meta []int32, rank, nIdx, idxStride int) {
	gatherAt(t, out, x, idx, meta, rank, nIdx, idxStride)
}

//kern:kernel block=256
func gatherBF16(t gpu.Thread, out, x []gpu.BFloat16, idx, meta []int32, rank, nIdx, idxStride int) {
	gatherAt(t, out, x, idx, meta, rank, nIdx, idxStride)
}

//kern:kernel block=256
func gatherI32(t gpu.Thread, out, x []int32, idx, meta []int32, rank, nIdx, idxStride int) {
	gatherAt(t, out, x, idx, meta, rank, nIdx, idxStride)
}

//kern:kernel block=256
func gatherI64(t gpu.Thread, out, x []int64, idx, meta []int32, rank, nIdx, idxStride int) {
	gatherAt(t, out, x, idx, meta, rank, nIdx, idxStride)
}

//kern:kernel block=256
func gatherBool(t gpu.Thread, out, x []bool, idx, meta []int32, rank, nIdx, idxStride int) {
	gatherAt(t, out, x, idx, meta, rank, nIdx, idxStride)
}
