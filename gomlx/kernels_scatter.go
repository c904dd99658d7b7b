package gomlx

// ScatterSum: out (a copy of the operand, made by copyStrided first)
// gets each update element added at the operand index its scatter index
// and window position name; elements that land outside the operand are
// dropped, as XLA defines. One thread per update element; updates that
// land on the same element meet in an atomic add, so float32 sums are
// in no fixed order (the result varies in the last bits, not more).
//
// meta, int32: [updDims(ur), updStrides(ur), opAxis(ur), idxStrides(ur),
// opDims(or), opStrides(or), mapAxis(nIdx)]. opAxis[j] is the operand
// axis update axis j walks (-1 for a batch axis); idxStrides[j] is how
// far a batch axis moves in the indices (0 for a window axis);
// mapAxis[k] is the operand axis index-vector entry k starts.
//
// Block: 256 threads. float32, int32 and int64 (the types PTX's
// atom.add covers that GoMLX uses).

import "github.com/gokern/kern/gpu"

// scatterOffset returns the operand offset update element i lands on,
// and whether it lies inside the operand.
func scatterOffset(i int, idx, meta []int32, ur, or, nIdx, idxStride int) (int, bool) {
	base := 0
	for j := 0; j < ur; j++ {
		c := (i / int(meta[ur+j])) % int(meta[j])
		base += c * int(meta[3*ur+j])
	}
	off := 0
	ok := true
	for a := 0; a < or; a++ {
		v := 0
		for j := 0; j < ur; j++ {
			if int(meta[2*ur+j]) == a {
				v += (i / int(meta[ur+j])) % int(meta[j])
			}
		}
		for k := 0; k < nIdx; k++ {
			if int(meta[4*ur+2*or+k]) == a {
				v += int(idx[base+k*idxStride])
			}
		}
		if v < 0 || v >= int(meta[4*ur+a]) {
			ok = false
		}
		off += v * int(meta[4*ur+or+a])
	}
	return off, ok
}

//kern:kernel block=256
func scatterAddF32(t gpu.Thread, out, upd []float32, idx, meta []int32, ur, or, nIdx, idxStride int) {
	i := t.GlobalX()
	if i >= len(upd) {
		return
	}
	if off, ok := scatterOffset(i, idx, meta, ur, or, nIdx, idxStride); ok {
		gpu.AtomicAdd(&out[off], upd[i])
	}
}

//kern:kernel block=256
func scatterAddI32(t gpu.Thread, out, upd []int32, idx, meta []int32, ur, or, nIdx, idxStride int) {
	i := t.GlobalX()
	if i >= len(upd) {
		return
	}
	if off, ok := scatterOffset(i, idx, meta, ur, or, nIdx, idxStride); ok {
		gpu.AtomicAdd(&out[off], upd[i])
	}
}

//kern:kernel block=256
func scatterAddI64(t gpu.Thread, out, upd []int64, idx, meta []int32, ur, or, nIdx, idxStride int) {
	i := t.GlobalX()
	if i >= len(upd) {
		return
	}
	if off, ok := scatterOffset(i, idx, meta, ur, or, nIdx, idxStride); ok {
		gpu.AtomicAdd(&out[off], upd[i])
	}
}
