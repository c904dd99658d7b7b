package gomlx

// ScatterSum (the gradient of Gather, so what training an embedding
// table needs): copy the operand, then add the updates in with
// scatterAdd (kernels_scatter.go), whose meta is worked out here.
// int64 scatter indices are converted to int32 first; 16-bit floats are
// summed in float32.

import (
	"fmt"
	"slices"

	"github.com/gokern/kern"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/shapeinference"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

var scatterAddK = ktable{
	dtypes.Float32: scatterAddF32Kernel.Kernel(), dtypes.Int32: scatterAddI32Kernel.Kernel(),
	dtypes.Int64: scatterAddI64Kernel.Kernel(), dtypes.Float64: scatterAddF64Kernel.Kernel(),
}

// ScatterSum implements backends.Builder.
func (bl *Builder) ScatterSum(operand, scatterIndices, updates backends.Op, indexVectorAxis int,
	updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes []int, indicesAreSorted, uniqueIndices bool) (backends.Op, error) {
	op := backends.OpTypeScatterSum
	ns, err := bl.in(op, operand, scatterIndices, updates)
	if err != nil {
		return nil, err
	}
	os, is, us := ns[0].shape, ns[1].shape, ns[2].shape
	shape, err := shapeinference.ScatterOp(os, is, us, indexVectorAxis, updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes)
	if err != nil {
		return nil, opErr(op, err)
	}
	if shape.DType == dtypes.Float16 || shape.DType == dtypes.BFloat16 {
		return bl.scatterSum16(operand, scatterIndices, updates, indexVectorAxis, updateWindowAxes, insertedWindowAxes,
			scatterAxesToOperandAxes, indicesAreSorted, uniqueIndices, shape.DType)
	}
	if err := need(op, scatterAddK, shape.DType); err != nil {
		return nil, err
	}
	if indexVectorAxis >= is.Rank() {
		return nil, opErr(op, fmt.Errorf("an implicit index vector axis (%d of %s) is not supported", indexVectorAxis, is))
	}
	idx := ns[1]
	switch is.DType {
	case dtypes.Int32:
	case dtypes.Int64:
		c, err := bl.ConvertDType(idx, dtypes.Int32)
		if err != nil {
			return nil, err
		}
		idx = c.(*node)
	default:
		return nil, opErr(op, fmt.Errorf("scatter indices of dtype %s are not supported (int32, int64)", is.DType))
	}
	var windowOpAxes []int // operand axes the update window walks, in order
	for a := range os.Rank() {
		if !slices.Contains(insertedWindowAxes, a) {
			windowOpAxes = append(windowOpAxes, a)
		}
	}
	ur, isStr := us.Rank(), strides(is.Dimensions)
	opAxis, idxS := make([]int, ur), make([]int, ur)
	w, batch := 0, 0
	for j := range ur {
		if slices.Contains(updateWindowAxes, j) {
			opAxis[j] = windowOpAxes[w]
			w++
			continue
		}
		opAxis[j] = -1
		if batch == indexVectorAxis {
			batch++
		}
		idxS[j] = isStr[batch]
		batch++
	}
	updDims := us.Dimensions
	if ur == 0 {
		updDims, opAxis, idxS, ur = []int{1}, []int{-1}, []int{0}, 1
	}
	meta, err := bl.meta(updDims, strides(updDims), opAxis, idxS, os.Dimensions, strides(os.Dimensions), scatterAxesToOperandAxes)
	if err != nil {
		return nil, opErr(op, err)
	}
	cp, err := bl.copyPlan([]int{os.Size()}, []int{1}, []int{1}, 0, 0)
	if err != nil {
		return nil, opErr(op, err)
	}
	or, nIdx, idxStride := os.Rank(), len(scatterAxesToOperandAxes), isStr[indexVectorAxis]
	k := scatterAddK[shape.DType]
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		if err := b.runCopy(cp, out, ins[0]); err != nil {
			return out, err
		}
		return out, k.Launch(b.dev, kern.Cover(us.Size()), out.arr.arg(), ins[2].arr.arg(), ins[1].arr.arg(),
			kern.BufferArg(meta), kern.ScalarArg(ur), kern.ScalarArg(or), kern.ScalarArg(nIdx), kern.ScalarArg(idxStride))
	}, ns[0], idx, ns[2]), nil
}

// scatterSum16 is ScatterSum for 16-bit floats, which PTX has no atomic
// add for that GoMLX uses: operand and updates are widened to float32
// (exactly), summed there, and the result rounded once to dt.
func (bl *Builder) scatterSum16(operand, scatterIndices, updates backends.Op, indexVectorAxis int,
	updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes []int, indicesAreSorted, uniqueIndices bool, dt dtypes.DType) (backends.Op, error) {
	o, err := bl.ConvertDType(operand, dtypes.Float32)
	if err != nil {
		return nil, err
	}
	u, err := bl.ConvertDType(updates, dtypes.Float32)
	if err != nil {
		return nil, err
	}
	s, err := bl.ScatterSum(o, scatterIndices, u, indexVectorAxis, updateWindowAxes, insertedWindowAxes,
		scatterAxesToOperandAxes, indicesAreSorted, uniqueIndices)
	if err != nil {
		return nil, err
	}
	return bl.ConvertDType(s, dt)
}
