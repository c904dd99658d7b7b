package gomlx

// Fusion: Compile looks in the recorded graph for patterns that kern's
// ops library implements as one kernel and lets the pattern's last node
// compute the whole of it from the pattern's inputs. The intermediate
// nodes stay in the graph, so any other reader (a gradient, an output)
// still gets them; when none does, Compile's liveness pass drops them.
//
// Recognised patterns, with float32, float16 and bfloat16 operands:
//
//	softmax  Div(Exp(Sub(x, m)), s) where m is ReduceMax(x) and s is
//	         ReduceSum of that Exp, both over x's last axis (kept as a
//	         dimension of 1 by a Reshape or broadcast): graph.Softmax over
//	         the last axis. Runs ops.Softmax (one block per row, online
//	         max and sum).
//	siluMul  Mul(Mul(x, Logistic(x)), up) in either operand order, all
//	         one shape: activations.Swish(x)·up, a SwiGLU gate. Runs
//	         ops.SiLUMul.
//
// Not recognised yet: RMSNorm (GoMLX v0.26.0 has no RMSNorm op, and user
// graphs spell it several ways), RoPE, GELU.

import (
	"slices"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// fuse rewrites the pattern roots among bl's nodes.
func (bl *Builder) fuse() {
	for _, n := range bl.nodes {
		if n.run == nil || n.broadcast || !isHalfOrF32(n.shape.DType) {
			continue
		}
		switch n.op {
		case backends.OpTypeDiv:
			if x := matchSoftmax(n); x != nil {
				rows := n.shape.Size() / max(n.shape.Dimensions[n.shape.Rank()-1], 1)
				cols := n.shape.Dimensions[n.shape.Rank()-1]
				n.inputs = []*node{x}
				n.run = fusedRun(n, func(q kern.Queue, out darray, in []darray) error {
					return softmaxAny(q, out, in[0], rows, cols)
				})
				bl.fused = append(bl.fused, "softmax")
			}
		case backends.OpTypeMul:
			if x, up := matchSiLUMul(n); x != nil {
				size := n.shape.Size()
				n.inputs = []*node{x, up}
				n.run = fusedRun(n, func(q kern.Queue, out darray, in []darray) error {
					return siluMulAny(q, out, in[0], in[1], size)
				})
				bl.fused = append(bl.fused, "siluMul")
			}
		}
	}
}

func isHalfOrF32(dt dtypes.DType) bool {
	return dt == dtypes.Float32 || dt == dtypes.Float16 || dt == dtypes.BFloat16
}

// strip follows nodes that only reshape or broadcast.
func strip(n *node) *node {
	for n.broadcast || n.op == backends.OpTypeReshape || n.op == backends.OpTypeIdentity || n.op == backends.OpTypeBroadcastInDim {
		n = n.inputs[0]
	}
	return n
}

// lastAxisReduce reports whether n is a reduction op over only the last
// axis of its input in.
func lastAxisReduce(n *node, op backends.OpType, in *node) bool {
	return n.op == op && n.run != nil && !n.broadcast && len(n.inputs) == 1 && n.inputs[0] == in &&
		slices.Equal(n.axes, []int{in.shape.Rank() - 1})
}

// matchSoftmax returns x when div is the softmax of x over its last axis.
func matchSoftmax(div *node) *node {
	if len(div.inputs) != 2 || div.shape.Rank() == 0 {
		return nil
	}
	e := div.inputs[0]
	if e.op != backends.OpTypeExp || e.broadcast || !e.shape.Equal(div.shape) {
		return nil
	}
	if !lastAxisReduce(strip(div.inputs[1]), backends.OpTypeReduceSum, e) {
		return nil
	}
	sub := e.inputs[0]
	if sub.op != backends.OpTypeSub || sub.broadcast || len(sub.inputs) != 2 {
		return nil
	}
	x := sub.inputs[0]
	if !x.shape.Equal(div.shape) || !lastAxisReduce(strip(sub.inputs[1]), backends.OpTypeReduceMax, x) {
		return nil
	}
	return x
}

// matchSiLUMul returns (x, up) when mul is x·logistic(x)·up.
func matchSiLUMul(mul *node) (x, up *node) {
	if len(mul.inputs) != 2 {
		return nil, nil
	}
	for i, a := range mul.inputs {
		if !a.shape.Equal(mul.shape) || !mul.inputs[1-i].shape.Equal(mul.shape) {
			return nil, nil
		}
		if a.op != backends.OpTypeMul || a.broadcast || len(a.inputs) != 2 {
			continue
		}
		for j, l := range a.inputs {
			if l.op == backends.OpTypeLogistic && !l.broadcast && l.inputs[0] == a.inputs[1-j] && l.shape.Equal(mul.shape) {
				return a.inputs[1-j], mul.inputs[1-i]
			}
		}
	}
	return nil, nil
}

// fusedRun is the run function of a fused node: allocate its output and
// call f on the device arrays.
func fusedRun(n *node, f func(q kern.Queue, out darray, in []darray) error) runFn {
	shape := n.shape
	return func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		arrs := make([]darray, len(ins))
		for i, in := range ins {
			arrs[i] = in.arr
		}
		return out, f(b.dev, out.arr, arrs)
	}
}

func softmaxAny(q kern.Queue, out, x darray, rows, cols int) error {
	switch o := out.(type) {
	case typed[float32]:
		return ops.Softmax(q, o.b, x.(typed[float32]).b, rows, cols)
	case typed[gpu.Half]:
		return ops.Softmax(q, o.b, x.(typed[gpu.Half]).b, rows, cols)
	default:
		return ops.Softmax(q, out.(typed[gpu.BFloat16]).b, x.(typed[gpu.BFloat16]).b, rows, cols)
	}
}

func siluMulAny(q kern.Queue, out, x, up darray, n int) error {
	switch o := out.(type) {
	case typed[float32]:
		return ops.SiLUMul(q, o.b, x.(typed[float32]).b, up.(typed[float32]).b, n)
	case typed[gpu.Half]:
		return ops.SiLUMul(q, o.b, x.(typed[gpu.Half]).b, up.(typed[gpu.Half]).b, n)
	default:
		return ops.SiLUMul(q, out.(typed[gpu.BFloat16]).b, x.(typed[gpu.BFloat16]).b, up.(typed[gpu.BFloat16]).b, n)
	}
}
