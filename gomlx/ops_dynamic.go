package gomlx

// DynamicSlice and DynamicUpdateSlice (a KV cache's read and write at a
// position known only on the device). The start indices are scalar ops;
// the builder gathers them into one int32 [rank] tensor (reshape each to
// [1], convert int64 to int32, concatenate), which the window kernel
// (kernels_dynamic.go) reads, so the positions never visit the host.

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

var dynK = ktable{
	dtypes.Float32: dynF32Kernel.Kernel(), dtypes.Float64: dynF64Kernel.Kernel(), dtypes.Float16: dynF16Kernel.Kernel(),
	dtypes.BFloat16: dynBF16Kernel.Kernel(), dtypes.Int32: dynI32Kernel.Kernel(), dtypes.Int64: dynI64Kernel.Kernel(),
	dtypes.Bool: dynBoolKernel.Kernel(),
}

// startsVector records the start index scalars as one int32 [rank] node.
func (bl *Builder) startsVector(op backends.OpType, starts []backends.Op, rank int) (*node, error) {
	if len(starts) != rank {
		return nil, opErr(op, fmt.Errorf("%d start indices for rank %d", len(starts), rank))
	}
	parts := make([]backends.Op, rank)
	for i, s := range starts {
		ns, err := bl.in(op, s)
		if err != nil {
			return nil, err
		}
		if ns[0].shape.Size() != 1 || (ns[0].shape.DType != dtypes.Int32 && ns[0].shape.DType != dtypes.Int64) {
			return nil, opErr(op, fmt.Errorf("start index #%d is %s, want an int32 or int64 scalar", i, ns[0].shape))
		}
		v, err := bl.reshape(op, ns[0], shapes.Make(ns[0].shape.DType, 1))
		if err != nil {
			return nil, err
		}
		if parts[i], err = bl.ConvertDType(v, dtypes.Int32); err != nil {
			return nil, err
		}
	}
	c, err := bl.Concatenate(0, parts...)
	if err != nil {
		return nil, err
	}
	return c.(*node), nil
}

// DynamicSlice implements backends.Builder.
func (bl *Builder) DynamicSlice(operand backends.Op, startIndices []backends.Op, sliceDims []int) (backends.Op, error) {
	op := backends.OpTypeDynamicSlice
	ns, err := bl.in(op, operand)
	if err != nil {
		return nil, err
	}
	xs := ns[0].shape
	if err := need(op, dynK, xs.DType); err != nil {
		return nil, err
	}
	if xs.Rank() == 0 || len(sliceDims) != xs.Rank() {
		return nil, opErr(op, fmt.Errorf("slice dims %v for %s", sliceDims, xs))
	}
	for a, w := range sliceDims {
		if w < 1 || w > xs.Dimensions[a] {
			return nil, opErr(op, fmt.Errorf("slice dims %v do not fit %s", sliceDims, xs))
		}
	}
	starts, err := bl.startsVector(op, startIndices, xs.Rank())
	if err != nil {
		return nil, err
	}
	meta, err := bl.meta(sliceDims, xs.Dimensions, strides(xs.Dimensions))
	if err != nil {
		return nil, opErr(op, err)
	}
	shape := shapes.Make(xs.DType, sliceDims...)
	k, rank, n := dynK[xs.DType], xs.Rank(), shape.Size()
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, k.Launch(b.dev, kern.Cover(n), out.arr.arg(), ins[0].arr.arg(), ins[1].arr.arg(), kern.BufferArg(meta),
			kern.ScalarArg(rank), kern.ScalarArg(n), kern.ScalarArg(0))
	}, ns[0], starts), nil
}

// DynamicUpdateSlice implements backends.Builder: copy the operand, then
// write the update into its window.
func (bl *Builder) DynamicUpdateSlice(operand, update backends.Op, startIndices []backends.Op) (backends.Op, error) {
	op := backends.OpTypeDynamicUpdateSlice
	ns, err := bl.in(op, operand, update)
	if err != nil {
		return nil, err
	}
	xs, us := ns[0].shape, ns[1].shape
	if err := need(op, dynK, xs.DType); err != nil {
		return nil, err
	}
	if us.DType != xs.DType || us.Rank() != xs.Rank() || xs.Rank() == 0 {
		return nil, opErr(op, fmt.Errorf("update %s for operand %s", us, xs))
	}
	for a, w := range us.Dimensions {
		if w < 1 || w > xs.Dimensions[a] {
			return nil, opErr(op, fmt.Errorf("update %s does not fit %s", us, xs))
		}
	}
	starts, err := bl.startsVector(op, startIndices, xs.Rank())
	if err != nil {
		return nil, err
	}
	meta, err := bl.meta(us.Dimensions, xs.Dimensions, strides(xs.Dimensions))
	if err != nil {
		return nil, opErr(op, err)
	}
	cp, err := bl.copyPlan([]int{xs.Size()}, []int{1}, []int{1}, 0, 0)
	if err != nil {
		return nil, opErr(op, err)
	}
	k, rank, n := dynK[xs.DType], xs.Rank(), us.Size()
	return bl.add(op, xs, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(xs)
		if err != nil {
			return nil, err
		}
		if err := b.runCopy(cp, out, ins[0]); err != nil {
			return out, err
		}
		return out, k.Launch(b.dev, kern.Cover(n), out.arr.arg(), ins[1].arr.arg(), ins[2].arr.arg(), kern.BufferArg(meta),
			kern.ScalarArg(rank), kern.ScalarArg(n), kern.ScalarArg(1))
	}, ns[0], ns[1], starts), nil
}
