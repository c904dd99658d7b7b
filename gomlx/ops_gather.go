package gomlx

// Gather (XLA semantics, as GoMLX's embedding lookups and their
// gradients' companions use it). The builder flattens the op's axis maps
// into per-output-axis strides, so the kernel (gatherAt in
// kernels_move.go) needs no knowledge of which axis is which: an output
// axis is either an offset axis (it walks an operand axis inside the
// window: operandStride = the operand axis' stride) or a batch axis (it
// walks the start indices: indexStride = the startIndices axis' stride).
// int64 start indices are converted to int32 first.

import (
	"fmt"
	"slices"

	"github.com/gokern/kern"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/shapeinference"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// Gather implements backends.Builder.
func (bl *Builder) Gather(operand, startIndices backends.Op, indexVectorAxis int,
	offsetOutputAxes, collapsedSliceAxes, startIndexMap, sliceSizes []int, indicesAreSorted bool) (backends.Op, error) {
	op := backends.OpTypeGather
	ns, err := bl.in(op, operand, startIndices)
	if err != nil {
		return nil, err
	}
	os, ss := ns[0].shape, ns[1].shape
	if indexVectorAxis >= ss.Rank() {
		return nil, opErr(op, fmt.Errorf("an implicit index vector axis (%d of %s) is not supported", indexVectorAxis, ss))
	}
	shape, err := shapeinference.Gather(os, ss, indexVectorAxis, offsetOutputAxes, collapsedSliceAxes, startIndexMap, sliceSizes, indicesAreSorted)
	if err != nil {
		return nil, opErr(op, err)
	}
	if err := need(op, gatherK, shape.DType); err != nil {
		return nil, err
	}
	idx := ns[1]
	switch ss.DType {
	case dtypes.Int32:
	case dtypes.Int64:
		c, err := bl.ConvertDType(idx, dtypes.Int32)
		if err != nil {
			return nil, err
		}
		idx = c.(*node)
	default:
		return nil, opErr(op, fmt.Errorf("start indices of dtype %s are not supported (int32, int64)", ss.DType))
	}
	opStr, ssStr := strides(os.Dimensions), strides(ss.Dimensions)
	var windowAxes []int // operand axes that are not collapsed, in order
	for a := range os.Rank() {
		if !slices.Contains(collapsedSliceAxes, a) {
			windowAxes = append(windowAxes, a)
		}
	}
	r := shape.Rank()
	opS, idxS := make([]int, r), make([]int, r)
	offset, batch := 0, 0
	for j := range r {
		if slices.Contains(offsetOutputAxes, j) {
			opS[j] = opStr[windowAxes[offset]]
			offset++
			continue
		}
		if batch == indexVectorAxis {
			batch++
		}
		idxS[j] = ssStr[batch]
		batch++
	}
	nIdx := len(startIndexMap)
	startS, maxStart := make([]int, nIdx), make([]int, nIdx)
	for k, a := range startIndexMap {
		startS[k] = opStr[a]
		maxStart[k] = os.Dimensions[a] - sliceSizes[a]
	}
	dims := shape.Dimensions
	if r == 0 {
		dims, opS, idxS = []int{1}, []int{0}, []int{0}
	}
	meta, err := bl.meta(dims, opS, idxS, startS, maxStart)
	if err != nil {
		return nil, opErr(op, err)
	}
	rank, idxStride := len(dims), ssStr[indexVectorAxis]
	k := gatherK[shape.DType]
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, k.Launch(b.dev, kern.Cover(shape.Size()), out.arr.arg(), ins[0].arr.arg(), ins[1].arr.arg(),
			kern.BufferArg(meta), kern.ScalarArg(rank), kern.ScalarArg(nIdx), kern.ScalarArg(idxStride))
	}, ns[0], idx), nil
}
