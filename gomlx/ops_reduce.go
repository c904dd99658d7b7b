package gomlx

// Reductions and ArgMinMax: a strided copy moves the reduced axes last
// (skipped when they already are), then one thread per output reduces a
// contiguous row (kernels_float.go, kernels_int.go).

import (
	"fmt"
	"slices"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/shapeinference"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// axesLast records x transposed so that axes come last, in order, and
// returns it with the product of their dimensions.
func (bl *Builder) axesLast(op backends.OpType, x *node, axes []int) (*node, int, error) {
	var perm, last []int
	cols := 1
	for a := range x.shape.Rank() {
		if slices.Contains(axes, a) {
			continue
		}
		perm = append(perm, a)
	}
	for _, a := range axes {
		last = append(last, a)
		cols *= x.shape.Dimensions[a]
	}
	perm = append(perm, last...)
	if isIdentity(perm) {
		return x, cols, nil
	}
	shape := x.shape.Clone()
	for j, p := range perm {
		shape.Dimensions[j] = x.shape.Dimensions[p]
	}
	t, err := bl.transpose(op, x, shape, perm)
	return t, cols, err
}

func isIdentity(perm []int) bool {
	for i, p := range perm {
		if i != p {
			return false
		}
	}
	return true
}

func (bl *Builder) reduce(op backends.OpType, code int, x backends.Op, axes []int) (backends.Op, error) {
	ns, err := bl.in(op, x)
	if err != nil {
		return nil, err
	}
	if len(axes) == 0 { // no axes reduces all of them, as in simplego
		for a := range ns[0].shape.Rank() {
			axes = append(axes, a)
		}
	}
	shape, err := shapeinference.ReduceOp(ns[0].shape, axes)
	if err != nil {
		return nil, opErr(op, err)
	}
	dt := shape.DType
	if err := need(op, reduceK, dt); err != nil {
		return nil, err
	}
	if (dt == dtypes.Bool) != (code >= redAnd) {
		return nil, fmt.Errorf("backend kern: %s: dtype %s is not supported", op, dt)
	}
	if len(axes) == 0 {
		return bl.reshape(op, ns[0], shape)
	}
	t, cols, err := bl.axesLast(op, ns[0], axes)
	if err != nil {
		return nil, err
	}
	if cols == 0 {
		return nil, opErr(op, fmt.Errorf("reducing axes %v of %s, which hold no elements", axes, ns[0].shape))
	}
	k := reduceK[dt]
	rows := shape.Size()
	if code == redSum && cols >= blockRowMin && sumBlockK[dt] != nil {
		// v2: a block per row (kernels_reduce.go).
		kb := sumBlockK[dt]
		grid := kern.Blocks(gpu.Dim3{X: rows, Y: 1, Z: 1}, kb.Spec().Block)
		n := bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
			out, err := b.alloc(shape)
			if err != nil {
				return nil, err
			}
			return out, kb.Launch(b.dev, grid, out.arr.arg(), ins[0].arr.arg(), kern.ScalarArg(cols))
		}, t)
		n.axes = axes
		return n, nil
	}
	n := bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, k.Launch(b.dev, kern.Cover(rows), out.arr.arg(), ins[0].arr.arg(), kern.ScalarArg(cols), kern.ScalarArg(code))
	}, t)
	n.axes = axes
	return n, nil
}

func (bl *Builder) ReduceSum(x backends.Op, axes ...int) (backends.Op, error) {
	return bl.reduce(backends.OpTypeReduceSum, redSum, x, axes)
}
func (bl *Builder) ReduceProduct(x backends.Op, axes ...int) (backends.Op, error) {
	return bl.reduce(backends.OpTypeReduceProduct, redProd, x, axes)
}
func (bl *Builder) ReduceMax(x backends.Op, axes ...int) (backends.Op, error) {
	return bl.reduce(backends.OpTypeReduceMax, redMax, x, axes)
}
func (bl *Builder) ReduceMin(x backends.Op, axes ...int) (backends.Op, error) {
	return bl.reduce(backends.OpTypeReduceMin, redMin, x, axes)
}
func (bl *Builder) ReduceLogicalAnd(x backends.Op, axes ...int) (backends.Op, error) {
	return bl.reduce(backends.OpTypeReduceLogicalAnd, redAnd, x, axes)
}
func (bl *Builder) ReduceLogicalOr(x backends.Op, axes ...int) (backends.Op, error) {
	return bl.reduce(backends.OpTypeReduceLogicalOr, redOr, x, axes)
}
func (bl *Builder) ReduceLogicalXor(x backends.Op, axes ...int) (backends.Op, error) {
	return bl.reduce(backends.OpTypeReduceLogicalXor, redXor, x, axes)
}

// ArgMinMax implements backends.Builder; the int32
// result is converted when outputDType is another integer type.
func (bl *Builder) ArgMinMax(x backends.Op, axis int, outputDType dtypes.DType, isMin bool) (backends.Op, error) {
	op := backends.OpTypeArgMinMax
	ns, err := bl.in(op, x)
	if err != nil {
		return nil, err
	}
	shape, err := shapeinference.ArgMinMaxOp(ns[0].shape, axis, outputDType)
	if err != nil {
		return nil, opErr(op, err)
	}
	if err := need(op, argRowsK, ns[0].shape.DType); err != nil {
		return nil, err
	}
	if outputDType != dtypes.Int32 && outputDType != dtypes.Int64 {
		return nil, fmt.Errorf("backend kern: %s: output dtype %s is not supported (int32, int64)", op, outputDType)
	}
	t, cols, err := bl.axesLast(op, ns[0], []int{axis})
	if err != nil {
		return nil, err
	}
	i32 := shape.Clone()
	i32.DType = dtypes.Int32
	k := argRowsK[ns[0].shape.DType]
	mn := 0
	if isMin {
		mn = 1
	}
	n := bl.add(op, i32, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(i32)
		if err != nil {
			return nil, err
		}
		return out, k.Launch(b.dev, kern.Cover(i32.Size()), out.arr.arg(), ins[0].arr.arg(), kern.ScalarArg(cols), kern.ScalarArg(mn))
	}, t)
	if outputDType == dtypes.Int32 {
		return n, nil
	}
	return bl.ConvertDType(n, outputDType)
}
