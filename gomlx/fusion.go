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
//	rmsNorm  Mul(Mul(x, Rsqrt(Add(Mul(ReduceSum(Mul(x, x)), 1/cols),
//	         eps))), w) over x's last axis, w of cols elements broadcast
//	         along it, operands of Mul and Add in either order: the way
//	         GoMLX code spells RMSNorm with ReduceAndKeep(Square(x),
//	         ReduceMean, -1), AddScalar(·, eps), Rsqrt and two Muls. Runs
//	         ops.RMSNorm.
//	gelu     Mul(x, Mul(Add(Erf(x·(1/√2) or x/√2), 1), 0.5)), operands of Mul
//	         and Add in either order: activations.Gelu (the exact, erf
//	         form). Runs ops.GELU.
//	geluTanh the same with Tanh(Mul(Add(x, Mul(Pow(x, 3), 0.044715)),
//	         √(2/π))) for the Erf: activations.GeluApproximate. Runs
//	         ops.GELUTanh.
//	rope     Add(Mul(x, cos), Mul(Concatenate(Neg(Slice(x, half:)),
//	         Slice(x, :half)), sin)) along x's last axis of even length d,
//	         half = d/2, operands of Add and Mul in either order, cos and
//	         sin of x's shape or broadcast to it: rotary embedding,
//	         rotate-half (NeoX, Llama, Qwen) layout. Runs ropeF32/F16/BF16
//	         (fusion_rope.go), not ops.RoPE, which makes cos and sin
//	         itself from positions.
//
// Not recognised yet: other spellings of RMSNorm (Div by cols, Pow -0.5,
// Sqrt then Div), RoPE in the interleaved (GPT-J) layout or with a
// scalar cos or sin.

import (
	"math"
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
		case backends.OpTypeAdd:
			if x, cos, sin := matchRoPE(n); x != nil {
				n.inputs = []*node{x, cos, sin}
				n.run = ropeRun(n)
				bl.fused = append(bl.fused, "rope")
			}
		case backends.OpTypeMul:
			if x, w, eps := matchRMSNorm(n); x != nil {
				cols := n.shape.Dimensions[n.shape.Rank()-1]
				rows := n.shape.Size() / max(cols, 1)
				n.inputs = []*node{x, w}
				n.run = fusedRun(n, func(q kern.Queue, out darray, in []darray) error {
					return rmsNormAny(q, out, in[0], in[1], rows, cols, eps)
				})
				bl.fused = append(bl.fused, "rmsNorm")
			} else if x := matchGELU(n); x != nil {
				size := n.shape.Size()
				n.inputs = []*node{x}
				n.run = fusedRun(n, func(q kern.Queue, out darray, in []darray) error {
					return geluAny(q, out, in[0], size, false)
				})
				bl.fused = append(bl.fused, "gelu")
			} else if x := matchGELUTanh(n); x != nil {
				size := n.shape.Size()
				n.inputs = []*node{x}
				n.run = fusedRun(n, func(q kern.Queue, out darray, in []darray) error {
					return geluAny(q, out, in[0], size, true)
				})
				bl.fused = append(bl.fused, "geluTanh")
			} else if x, up := matchSiLUMul(n); x != nil {
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

// near reports whether a constant c is v to within a 16-bit float's
// rounding (2⁻⁸ relative): GoMLX makes the constant in x's dtype.
func near(c, v float64) bool { return math.Abs(c-v) <= math.Abs(v)/128 }

// geluOuter returns (x, f) when mul is x·((1 + f)·0.5), the shape both
// GELU forms share (f is erf(x/√2) or tanh(√(2/π)·(x + 0.044715·x³))).
func geluOuter(mul *node) (x, f *node) {
	if len(mul.inputs) != 2 {
		return nil, nil
	}
	for i, x := range mul.inputs {
		if !x.shape.Equal(mul.shape) {
			continue
		}
		half := mul.inputs[1-i]
		if !isOp(half, backends.OpTypeMul) {
			continue
		}
		one, c, ok := scalarIn(half)
		if !ok || !near(c, 0.5) || !isOp(one, backends.OpTypeAdd) {
			continue
		}
		if f, c, ok := scalarIn(one); ok && near(c, 1) {
			return x, f
		}
	}
	return nil, nil
}

// matchGELU returns x when mul is x·Φ(x) with Φ(x) = (1 + erf(x/√2))·0.5.
func matchGELU(mul *node) *node {
	x, erf := geluOuter(mul)
	if x == nil || !isOp(erf, backends.OpTypeErf) {
		return nil
	}
	// x/√2, which graph.DivScalar records as x·(1/√2).
	scaled := erf.inputs[0]
	switch {
	case isOp(scaled, backends.OpTypeMul):
		if y, c, ok := scalarIn(scaled); ok && y == x && near(c, 1/math.Sqrt2) {
			return x
		}
	case isOp(scaled, backends.OpTypeDiv) && scaled.inputs[0] == x:
		if c := strip(scaled.inputs[1]); c.scalar != nil && near(*c.scalar, math.Sqrt2) {
			return x
		}
	}
	return nil
}

// matchGELUTanh returns x when mul is x·(1 + tanh(√(2/π)·(x +
// 0.044715·x³)))·0.5, as activations.GeluApproximate records it (x³ as
// Pow(x, 3)).
func matchGELUTanh(mul *node) *node {
	x, th := geluOuter(mul)
	if x == nil || !isOp(th, backends.OpTypeTanh) {
		return nil
	}
	inner := th.inputs[0]
	if !isOp(inner, backends.OpTypeMul) {
		return nil
	}
	sum, c, ok := scalarIn(inner)
	if !ok || !near(c, math.Sqrt(2/math.Pi)) || !isOp(sum, backends.OpTypeAdd) || len(sum.inputs) != 2 {
		return nil
	}
	for i, y := range sum.inputs {
		cube := sum.inputs[1-i]
		if y != x || !isOp(cube, backends.OpTypeMul) {
			continue
		}
		p, c, ok := scalarIn(cube)
		if !ok || !near(c, 0.044715) || !isOp(p, backends.OpTypePow) || p.inputs[0] != x {
			continue
		}
		if e := strip(p.inputs[1]); e.scalar != nil && *e.scalar == 3 {
			return x
		}
	}
	return nil
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

// isOp reports whether n is an op node (not an operand broadcast) of op.
func isOp(n *node, op backends.OpType) bool {
	return n.op == op && !n.broadcast && n.run != nil
}

// scalarIn returns the other operand of the binary node n when one of its
// operands (after stripping) is a scalar constant, and the constant.
func scalarIn(n *node) (*node, float64, bool) {
	for i, in := range n.inputs {
		if c := strip(in); c.scalar != nil {
			return n.inputs[1-i], *c.scalar, true
		}
	}
	return nil, 0, false
}

// matchRMSNorm returns (x, w, eps) when mul is the RMSNorm of x over its
// last axis scaled by w ([cols] elements, broadcast along the rows).
func matchRMSNorm(mul *node) (x, w *node, eps float32) {
	if len(mul.inputs) != 2 || mul.shape.Rank() == 0 {
		return nil, nil, 0
	}
	cols := mul.shape.Dimensions[mul.shape.Rank()-1]
	for i, xn := range mul.inputs {
		if !isOp(xn, backends.OpTypeMul) {
			continue
		}
		w := weightAlongLastAxis(mul.inputs[1-i], mul.shape.Rank(), cols)
		if w == nil {
			continue
		}
		for j, x := range xn.inputs {
			if !x.shape.Equal(mul.shape) {
				continue
			}
			r := strip(xn.inputs[1-j])
			if !isOp(r, backends.OpTypeRsqrt) {
				continue
			}
			a := strip(r.inputs[0])
			if !isOp(a, backends.OpTypeAdd) {
				continue
			}
			m, e, ok := scalarIn(a)
			if !ok {
				continue
			}
			m = strip(m)
			if !isOp(m, backends.OpTypeMul) {
				continue
			}
			// 1/cols as the constant's dtype holds it (a 16-bit float
			// rounds it by up to 2⁻⁸ relative).
			tol := 1e-6
			if mul.shape.DType != dtypes.Float32 {
				tol = 1.0 / 128
			}
			s, c, ok := scalarIn(m)
			if !ok || math.Abs(c*float64(cols)-1) > tol {
				continue
			}
			sq := strip(s)
			if sq.op != backends.OpTypeReduceSum || len(sq.inputs) != 1 {
				continue
			}
			x2 := sq.inputs[0]
			if !lastAxisReduce(sq, backends.OpTypeReduceSum, x2) || !isOp(x2, backends.OpTypeMul) ||
				x2.inputs[0] != x || x2.inputs[1] != x {
				continue
			}
			return x, w, float32(e)
		}
	}
	return nil, nil, 0
}

// weightAlongLastAxis returns the [cols]-element node that n broadcasts
// along the last axis of a rank-rank result, or nil.
func weightAlongLastAxis(n *node, rank, cols int) *node {
	switch {
	case n.broadcast: // an operand broadcast: same rank, dimensions of 1 expand
		d := n.inputs[0].shape.Dimensions
		if len(d) != rank || d[rank-1] != cols || n.inputs[0].shape.Size() != cols {
			return nil
		}
		n = n.inputs[0]
	case isOp(n, backends.OpTypeBroadcastInDim):
		// Every input axis but one of dimension cols, landing on the last
		// output axis, has dimension 1.
		in := n.inputs[0].shape
		for i, d := range in.Dimensions {
			if d != 1 && (d != cols || n.axes[i] != rank-1) {
				return nil
			}
		}
		n = n.inputs[0]
	default:
		return nil
	}
	for isOp(n, backends.OpTypeReshape) {
		n = n.inputs[0]
	}
	if n.shape.Size() != cols {
		return nil
	}
	return n
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

func rmsNormAny(q kern.Queue, out, x, w darray, rows, cols int, eps float32) error {
	switch o := out.(type) {
	case typed[float32]:
		return ops.RMSNorm(q, o.b, x.(typed[float32]).b, w.(typed[float32]).b, rows, cols, eps)
	case typed[gpu.Half]:
		return ops.RMSNorm(q, o.b, x.(typed[gpu.Half]).b, w.(typed[gpu.Half]).b, rows, cols, eps)
	default:
		return ops.RMSNorm(q, out.(typed[gpu.BFloat16]).b, x.(typed[gpu.BFloat16]).b, w.(typed[gpu.BFloat16]).b, rows, cols, eps)
	}
}

func geluAny(q kern.Queue, out, x darray, n int, tanh bool) error {
	switch o := out.(type) {
	case typed[float32]:
		return gelu(q, o.b, x.(typed[float32]).b, n, tanh)
	case typed[gpu.Half]:
		return gelu(q, o.b, x.(typed[gpu.Half]).b, n, tanh)
	default:
		return gelu(q, out.(typed[gpu.BFloat16]).b, x.(typed[gpu.BFloat16]).b, n, tanh)
	}
}

func gelu[T ops.Float](q kern.Queue, out, x *kern.Buffer[T], n int, tanh bool) error {
	if tanh {
		return ops.GELUTanh(q, out, x, n)
	}
	return ops.GELU(q, out, x, n)
}
