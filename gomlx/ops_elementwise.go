package gomlx

// Element-wise ops: unary, binary, comparisons, logical, ConvertDType and
// Clamp. Each records one launch of the dtype's kernel with the op code
// (kernels_float.go, kernels_int.go); a binary operand that is neither
// full-sized nor a single element is first broadcast by a strided copy.

import (
	"fmt"
	"slices"

	"github.com/gokern/kern"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/shapeinference"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

func (bl *Builder) unary(op backends.OpType, code int, x backends.Op) (backends.Op, error) {
	ns, err := bl.in(op, x)
	if err != nil {
		return nil, err
	}
	shape, err := shapeinference.UnaryOp(op, ns[0].shape)
	if err != nil {
		return nil, opErr(op, err)
	}
	dt := shape.DType
	k := unaryK[dt]
	if dt == dtypes.Bool && code == opNot {
		k = notBKernel.Kernel()
	} else if dt.IsInt() && code != opNeg && code != opAbs && code != opSign && code != opNot {
		k = nil
	}
	if k == nil {
		return nil, fmt.Errorf("backend kern: %s: dtype %s is not supported", op, dt)
	}
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		args := []kern.Arg{out.arr.arg(), ins[0].arr.arg()}
		if dt != dtypes.Bool {
			args = append(args, kern.ScalarArg(code))
		}
		return out, k.Launch(b.dev, kern.Cover(shape.Size()), args...)
	}, ns...), nil
}

func (bl *Builder) Neg(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeNeg, opNeg, x)
}
func (bl *Builder) Abs(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeAbs, opAbs, x)
}
func (bl *Builder) Exp(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeExp, opExp, x)
}
func (bl *Builder) Log(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeLog, opLog, x)
}
func (bl *Builder) Sqrt(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeSqrt, opSqrt, x)
}
func (bl *Builder) Rsqrt(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeRsqrt, opRsqrt, x)
}
func (bl *Builder) Tanh(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeTanh, opTanh, x)
}
func (bl *Builder) Logistic(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeLogistic, opLogistic, x)
}
func (bl *Builder) Sin(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeSin, opSin, x)
}
func (bl *Builder) Cos(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeCos, opCos, x)
}
func (bl *Builder) Erf(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeErf, opErf, x)
}
func (bl *Builder) Floor(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeFloor, opFloor, x)
}
func (bl *Builder) Ceil(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeCeil, opCeil, x)
}
func (bl *Builder) Round(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeRound, opRound, x)
}
func (bl *Builder) Sign(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeSign, opSign, x)
}
func (bl *Builder) LogicalNot(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeLogicalNot, opNot, x)
}
func (bl *Builder) BitwiseNot(x backends.Op) (backends.Op, error) {
	return bl.unary(backends.OpTypeBitwiseNot, opNot, x)
}

// IsFinite implements backends.Builder.
func (bl *Builder) IsFinite(x backends.Op) (backends.Op, error) {
	return bl.isPred(backends.OpTypeIsFinite, 0, x)
}

// IsNaN implements backends.Builder.
func (bl *Builder) IsNaN(x backends.Op) (backends.Op, error) {
	return bl.isPred(backends.OpTypeIsNaN, 1, x)
}

func (bl *Builder) isPred(op backends.OpType, code int, x backends.Op) (backends.Op, error) {
	ns, err := bl.in(op, x)
	if err != nil {
		return nil, err
	}
	if err := need(op, isPredK, ns[0].shape.DType); err != nil {
		return nil, err
	}
	shape := ns[0].shape.Clone()
	shape.DType = dtypes.Bool
	k := isPredK[ns[0].shape.DType]
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, k.Launch(b.dev, kern.Cover(shape.Size()), out.arr.arg(), ins[0].arr.arg(), kern.ScalarArg(code))
	}, ns...), nil
}

// operand returns n as an input of an element-wise op of output dims: n
// itself when full-sized or a single element (with its index stride, 1
// or 0), else n broadcast to dims by a strided copy.
func (bl *Builder) operand(op backends.OpType, n *node, dims []int) (*node, int, error) {
	out := shapes.Make(n.shape.DType, dims...)
	switch {
	case n.shape.Size() == out.Size():
		return n, 1, nil
	case n.shape.Size() == 1:
		return n, 0, nil
	}
	axes := make([]int, len(dims))
	for i := range axes {
		axes[i] = i
	}
	m, err := bl.broadcastTo(op, n, out, axes)
	if err != nil {
		return nil, 0, err
	}
	m.broadcast = true
	return m, 1, nil
}

// binary records a binary or comparison op; table is binaryK or compareK.
func (bl *Builder) binary(op backends.OpType, table ktable, code int, lhs, rhs backends.Op) (backends.Op, error) {
	ns, err := bl.in(op, lhs, rhs)
	if err != nil {
		return nil, err
	}
	var shape shapes.Shape
	if shapeinference.ComparisonOperations.Has(op) {
		shape, err = shapeinference.ComparisonOp(op, ns[0].shape, ns[1].shape)
	} else {
		shape, err = shapeinference.BinaryOp(op, ns[0].shape, ns[1].shape)
	}
	if err != nil {
		return nil, opErr(op, err)
	}
	dt := ns[0].shape.DType
	if err := need(op, table, dt); err != nil {
		return nil, err
	}
	a, sa, err := bl.operand(op, ns[0], shape.Dimensions)
	if err != nil {
		return nil, err
	}
	c, sb, err := bl.operand(op, ns[1], shape.Dimensions)
	if err != nil {
		return nil, err
	}
	k := table[dt]
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, k.Launch(b.dev, kern.Cover(shape.Size()), out.arr.arg(), ins[0].arr.arg(), ins[1].arr.arg(),
			kern.ScalarArg(code), kern.ScalarArg(sa), kern.ScalarArg(sb))
	}, a, c), nil
}

func (bl *Builder) Add(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeAdd, binaryK, opAdd, lhs, rhs)
}
func (bl *Builder) Sub(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeSub, binaryK, opSub, lhs, rhs)
}
func (bl *Builder) Mul(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeMul, binaryK, opMul, lhs, rhs)
}
func (bl *Builder) Div(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeDiv, binaryK, opDiv, lhs, rhs)
}
func (bl *Builder) Max(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeMax, binaryK, opMax, lhs, rhs)
}
func (bl *Builder) Min(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeMin, binaryK, opMin, lhs, rhs)
}
func (bl *Builder) Pow(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypePow, floatOnly(binaryK), opPow, lhs, rhs)
}
func (bl *Builder) Rem(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeRem, binaryK, opRem, lhs, rhs)
}
func (bl *Builder) BitwiseAnd(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeBitwiseAnd, intOnly(binaryK), opAnd, lhs, rhs)
}
func (bl *Builder) BitwiseOr(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeBitwiseOr, intOnly(binaryK), opOr, lhs, rhs)
}
func (bl *Builder) BitwiseXor(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeBitwiseXor, intOnly(binaryK), opXor, lhs, rhs)
}
func (bl *Builder) LogicalAnd(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeLogicalAnd, binaryK, opAnd, lhs, rhs)
}
func (bl *Builder) LogicalOr(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeLogicalOr, binaryK, opOr, lhs, rhs)
}
func (bl *Builder) LogicalXor(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeLogicalXor, binaryK, opXor, lhs, rhs)
}
func (bl *Builder) Equal(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeEqual, compareK, cmpEq, lhs, rhs)
}
func (bl *Builder) NotEqual(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeNotEqual, compareK, cmpNe, lhs, rhs)
}
func (bl *Builder) LessThan(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeLessThan, compareK, cmpLt, lhs, rhs)
}
func (bl *Builder) LessOrEqual(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeLessOrEqual, compareK, cmpLe, lhs, rhs)
}
func (bl *Builder) GreaterThan(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeGreaterThan, compareK, cmpGt, lhs, rhs)
}
func (bl *Builder) GreaterOrEqual(lhs, rhs backends.Op) (backends.Op, error) {
	return bl.binary(backends.OpTypeGreaterOrEqual, compareK, cmpGe, lhs, rhs)
}

// floatOnly and intOnly restrict a kernel table to float or integer dtypes.
func floatOnly(t ktable) ktable { return restrict(t, dtypes.DType.IsFloat) }
func intOnly(t ktable) ktable   { return restrict(t, dtypes.DType.IsInt) }

func restrict(t ktable, keep func(dtypes.DType) bool) ktable {
	r := ktable{}
	for dt, k := range t {
		if keep(dt) {
			r[dt] = k
		}
	}
	return r
}

// Clamp implements backends.Builder as Min(Max(x, lo), hi).
func (bl *Builder) Clamp(lo, x, hi backends.Op) (backends.Op, error) {
	m, err := bl.Max(x, lo)
	if err != nil {
		return nil, err
	}
	return bl.Min(m, hi)
}

// ConvertDType implements backends.Builder: one kernel, or two through
// float32 (kernels_convert.go).
func (bl *Builder) ConvertDType(x backends.Op, dtype dtypes.DType) (backends.Op, error) {
	op := backends.OpTypeConvertDType
	ns, err := bl.in(op, x)
	if err != nil {
		return nil, err
	}
	from := ns[0].shape.DType
	if !supportedDType(from) || !supportedDType(dtype) {
		return nil, fmt.Errorf("backend kern: %s %s → %s: dtype not supported (supported: %v)", op, from, dtype, storedDTypes)
	}
	shape := ns[0].shape.Clone()
	shape.DType = dtype
	var steps []*kern.Kernel
	switch {
	case from == dtype:
		return bl.reshape(op, ns[0], shape)
	case directK[[2]dtypes.DType{from, dtype}] != nil:
		steps = []*kern.Kernel{directK[[2]dtypes.DType{from, dtype}]}
	case from == dtypes.Float32:
		steps = []*kern.Kernel{fromF32K[dtype]}
	case dtype == dtypes.Float32:
		steps = []*kern.Kernel{toF32K[from]}
	default:
		steps = []*kern.Kernel{toF32K[from], fromF32K[dtype]}
	}
	if slices.Contains(steps, nil) {
		return nil, fmt.Errorf("backend kern: %s %s → %s: not supported", op, from, dtype)
	}
	mid := shape.Clone()
	mid.DType = dtypes.Float32
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		src := ins[0]
		if len(steps) == 2 {
			tmp, err := b.alloc(mid)
			if err != nil {
				return nil, err
			}
			defer b.release(tmp)
			if err := steps[0].Launch(b.dev, kern.Cover(shape.Size()), tmp.arr.arg(), src.arr.arg()); err != nil {
				return nil, err
			}
			src = tmp
		}
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, steps[len(steps)-1].Launch(b.dev, kern.Cover(shape.Size()), out.arr.arg(), src.arr.arg())
	}, ns...), nil
}
