package gomlx

// Shape ops: every one is a strided copy (kernels_move.go) whose dims and
// strides are worked out here, while recording: Identity, Reshape,
// Transpose, BroadcastInDim, Slice, Reverse, Concatenate and Pad; plus
// Iota and Where.

import (
	"fmt"
	"slices"

	"github.com/gokern/kern"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/shapeinference"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// copyPlan is one launch of copyStrided: the index space dims (in meta
// with the source and destination strides) and the base offsets.
type copyPlan struct {
	meta           *kern.Buffer[int32]
	rank, n        int
	srcOff, dstOff int
}

func (bl *Builder) copyPlan(dims, src, dst []int, srcOff, dstOff int) (*copyPlan, error) {
	if len(dims) == 0 { // a scalar: one element, no strides
		dims, src, dst = []int{1}, []int{0}, []int{0}
	}
	n := 1
	for _, d := range dims {
		n *= d
	}
	m, err := bl.meta(dims, src, dst)
	if err != nil {
		return nil, err
	}
	return &copyPlan{meta: m, rank: len(dims), n: n, srcOff: srcOff, dstOff: dstOff}, nil
}

// runCopy launches p from x into out (both of dtype out.shape.DType).
func (b *Backend) runCopy(p *copyPlan, out, x *Buffer) error {
	return copyK[out.shape.DType].Launch(b.dev, kern.Cover(p.n), out.arr.arg(), x.arr.arg(), kern.BufferArg(p.meta),
		kern.ScalarArg(p.rank), kern.ScalarArg(p.n), kern.ScalarArg(p.srcOff), kern.ScalarArg(p.dstOff))
}

// stridedNode records out[idx] = x[srcOff + Σ idx·src] over shape.
func (bl *Builder) stridedNode(op backends.OpType, x *node, shape shapes.Shape, src []int, srcOff int) (*node, error) {
	if err := need(op, copyK, shape.DType); err != nil {
		return nil, err
	}
	p, err := bl.copyPlan(shape.Dimensions, src, strides(shape.Dimensions), srcOff, 0)
	if err != nil {
		return nil, opErr(op, err)
	}
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, b.runCopy(p, out, ins[0])
	}, x), nil
}

// copyOp records a contiguous copy of x, as op.
func (bl *Builder) copyOp(op backends.OpType, x backends.Op) (*node, error) {
	ns, err := bl.in(op, x)
	if err != nil {
		return nil, err
	}
	return bl.reshape(op, ns[0], ns[0].shape)
}

func (bl *Builder) reshape(op backends.OpType, x *node, shape shapes.Shape) (*node, error) {
	n := shape.Size()
	if err := need(op, copyK, shape.DType); err != nil {
		return nil, err
	}
	p, err := bl.copyPlan([]int{n}, []int{1}, []int{1}, 0, 0)
	if err != nil {
		return nil, opErr(op, err)
	}
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, b.runCopy(p, out, ins[0])
	}, x), nil
}

// Reshape implements backends.Builder (row-major order is kept, so it is
// a flat copy).
func (bl *Builder) Reshape(x backends.Op, dims ...int) (backends.Op, error) {
	op := backends.OpTypeReshape
	ns, err := bl.in(op, x)
	if err != nil {
		return nil, err
	}
	shape, err := shapeinference.ReshapeOp(ns[0].shape, dims)
	if err != nil {
		return nil, opErr(op, err)
	}
	return bl.reshape(op, ns[0], shape)
}

// Transpose implements backends.Builder.
func (bl *Builder) Transpose(x backends.Op, permutation ...int) (backends.Op, error) {
	op := backends.OpTypeTranspose
	ns, err := bl.in(op, x)
	if err != nil {
		return nil, err
	}
	shape, err := shapeinference.TransposeOp(ns[0].shape, permutation)
	if err != nil {
		return nil, opErr(op, err)
	}
	return bl.transpose(op, ns[0], shape, permutation)
}

func (bl *Builder) transpose(op backends.OpType, x *node, shape shapes.Shape, perm []int) (*node, error) {
	xs := strides(x.shape.Dimensions)
	src := make([]int, len(perm))
	for j, p := range perm {
		src[j] = xs[p]
	}
	return bl.stridedNode(op, x, shape, src, 0)
}

// BroadcastInDim implements backends.Builder: broadcast axes read with
// stride 0.
func (bl *Builder) BroadcastInDim(x backends.Op, outputShape shapes.Shape, broadcastAxes []int) (backends.Op, error) {
	op := backends.OpTypeBroadcastInDim
	ns, err := bl.in(op, x)
	if err != nil {
		return nil, err
	}
	if err := shapeinference.BroadcastInDimOp(ns[0].shape, outputShape, broadcastAxes); err != nil {
		return nil, opErr(op, err)
	}
	n, err := bl.broadcastTo(op, ns[0], outputShape, broadcastAxes)
	if err != nil {
		return nil, err
	}
	n.axes = broadcastAxes
	return n, nil
}

// broadcastTo records x broadcast to shape, x's axis i landing on axis
// axes[i] of shape.
func (bl *Builder) broadcastTo(op backends.OpType, x *node, shape shapes.Shape, axes []int) (*node, error) {
	xs := strides(x.shape.Dimensions)
	src := make([]int, shape.Rank())
	for i, a := range axes {
		if x.shape.Dimensions[i] == shape.Dimensions[a] {
			src[a] = xs[i]
		}
	}
	shape.DType = x.shape.DType
	return bl.stridedNode(op, x, shape, src, 0)
}

// Slice implements backends.Builder.
func (bl *Builder) Slice(x backends.Op, starts, limits, strideSteps []int) (backends.Op, error) {
	op := backends.OpTypeSlice
	ns, err := bl.in(op, x)
	if err != nil {
		return nil, err
	}
	shape, err := shapeinference.SliceOp(ns[0].shape, starts, limits, strideSteps)
	if err != nil {
		return nil, opErr(op, err)
	}
	xs := strides(ns[0].shape.Dimensions)
	src := make([]int, len(xs))
	off := 0
	for k := range xs {
		step := 1
		if len(strideSteps) > 0 {
			step = strideSteps[k]
		}
		src[k] = xs[k] * step
		off += starts[k] * xs[k]
	}
	n, err := bl.stridedNode(op, ns[0], shape, src, off)
	if err == nil && !slices.ContainsFunc(strideSteps, func(s int) bool { return s != 1 }) {
		n.starts, n.limits = slices.Clone(starts), slices.Clone(limits)
	}
	return n, err
}

// Reverse implements backends.Builder: reversed axes read with a negative
// stride from their last element.
func (bl *Builder) Reverse(x backends.Op, axes ...int) (backends.Op, error) {
	op := backends.OpTypeReverse
	ns, err := bl.in(op, x)
	if err != nil {
		return nil, err
	}
	shape := ns[0].shape
	src := strides(shape.Dimensions)
	off := 0
	for _, a := range axes {
		if a < 0 || a >= shape.Rank() {
			return nil, opErr(op, fmt.Errorf("axis %d out of range for %s", a, shape))
		}
		off += (shape.Dimensions[a] - 1) * src[a]
		src[a] = -src[a]
	}
	return bl.stridedNode(op, ns[0], shape, src, off)
}

// Concatenate implements backends.Builder: one strided copy per operand
// into its place in the output.
func (bl *Builder) Concatenate(axis int, operands ...backends.Op) (backends.Op, error) {
	op := backends.OpTypeConcatenate
	ns, err := bl.in(op, operands...)
	if err != nil {
		return nil, err
	}
	in := make([]shapes.Shape, len(ns))
	for i, n := range ns {
		in[i] = n.shape
	}
	shape, err := shapeinference.ConcatenateOp(in, axis)
	if err != nil {
		return nil, opErr(op, err)
	}
	if err := need(op, copyK, shape.DType); err != nil {
		return nil, err
	}
	os := strides(shape.Dimensions)
	plans := make([]*copyPlan, len(ns))
	at := 0
	for i, n := range ns {
		if plans[i], err = bl.copyPlan(n.shape.Dimensions, strides(n.shape.Dimensions), os, 0, at*os[axis]); err != nil {
			return nil, opErr(op, err)
		}
		at += n.shape.Dimensions[axis]
	}
	n := bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		for i, p := range plans {
			if err := b.runCopy(p, out, ins[i]); err != nil {
				return out, err
			}
		}
		return out, nil
	}, ns...)
	n.axes = []int{axis}
	return n, nil
}

// Pad implements backends.Builder for non-negative padding: fill, then a
// strided copy of x to its place (interior padding spreads the strides).
func (bl *Builder) Pad(x, fillValue backends.Op, axesConfig ...backends.PadAxis) (backends.Op, error) {
	op := backends.OpTypePad
	ns, err := bl.in(op, x, fillValue)
	if err != nil {
		return nil, err
	}
	xs := ns[0].shape
	if ns[1].shape.Size() != 1 || ns[1].shape.DType != xs.DType {
		return nil, opErr(op, fmt.Errorf("fill value %s must be a scalar of %s", ns[1].shape, xs.DType))
	}
	if len(axesConfig) > xs.Rank() {
		return nil, opErr(op, fmt.Errorf("%d axes configured for %s", len(axesConfig), xs))
	}
	shape := xs.Clone()
	dst := make([]int, xs.Rank())
	cfg := make([]backends.PadAxis, xs.Rank())
	copy(cfg, axesConfig)
	for a, c := range cfg {
		if c.Start < 0 || c.End < 0 || c.Interior < 0 {
			return nil, opErr(op, fmt.Errorf("negative padding %+v on axis %d is not supported", c, a))
		}
		d := xs.Dimensions[a]
		shape.Dimensions[a] = c.Start + c.End + d + max(d-1, 0)*c.Interior
	}
	os := strides(shape.Dimensions)
	off := 0
	for a, c := range cfg {
		dst[a] = os[a] * (c.Interior + 1)
		off += c.Start * os[a]
	}
	if err := need(op, copyK, shape.DType); err != nil {
		return nil, err
	}
	p, err := bl.copyPlan(xs.Dimensions, strides(xs.Dimensions), dst, 0, off)
	if err != nil {
		return nil, opErr(op, err)
	}
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		if err := fillK[shape.DType].Launch(b.dev, kern.Cover(shape.Size()), out.arr.arg(), ins[1].arr.arg()); err != nil {
			return out, err
		}
		return out, b.runCopy(p, out, ins[0])
	}, ns...), nil
}

// Iota implements backends.Builder.
func (bl *Builder) Iota(shape shapes.Shape, iotaAxis int) (backends.Op, error) {
	op := backends.OpTypeIota
	if _, err := bl.in(op); err != nil {
		return nil, err
	}
	if iotaAxis < 0 || iotaAxis >= shape.Rank() {
		return nil, opErr(op, fmt.Errorf("axis %d out of range for %s", iotaAxis, shape))
	}
	if err := need(op, iotaK, shape.DType); err != nil {
		return nil, err
	}
	dim, stride := shape.Dimensions[iotaAxis], strides(shape.Dimensions)[iotaAxis]
	return bl.add(op, shape, func(b *Backend, _ []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, iotaK[shape.DType].Launch(b.dev, kern.Cover(shape.Size()), out.arr.arg(), kern.ScalarArg(dim), kern.ScalarArg(stride))
	}), nil
}

// Where implements backends.Builder; a scalar condition or branch is
// broadcast by a zero stride.
func (bl *Builder) Where(condition, onTrue, onFalse backends.Op) (backends.Op, error) {
	op := backends.OpTypeWhere
	ns, err := bl.in(op, condition, onTrue, onFalse)
	if err != nil {
		return nil, err
	}
	shape, err := shapeinference.WhereOp(ns[0].shape, ns[1].shape, ns[2].shape)
	if err != nil {
		return nil, opErr(op, err)
	}
	if err := need(op, whereK, shape.DType); err != nil {
		return nil, err
	}
	s := func(n *node) int { return min(n.shape.Size(), 2) - 1 } // 0 for a scalar, else 1
	cs, as, bs := s(ns[0]), s(ns[1]), s(ns[2])
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, whereK[shape.DType].Launch(b.dev, kern.Cover(shape.Size()), out.arr.arg(), ins[0].arr.arg(),
			ins[1].arr.arg(), ins[2].arr.arg(), kern.ScalarArg(cs), kern.ScalarArg(as), kern.ScalarArg(bs))
	}, ns...), nil
}
