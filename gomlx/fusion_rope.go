package gomlx

// RoPE fusion: x·cos + rotate_half(x)·sin over x's last axis of d
// elements (half = d/2), where rotate_half(x) is Concatenate(-x[..., half:],
// x[..., :half]) along that axis: the rotate-half (NeoX, Llama, Qwen)
// layout with cos and sin given as tensors of x's shape. ops.RoPE does
// not fit: it computes cos and sin itself from token positions and a
// theta, while the graph hands them over as arbitrary tensors (scaled,
// cached or offset however the model likes), so a kernel of its own here
// reads them.

import (
	"slices"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// rope: one thread per element j of a row of d (even) elements, i = j mod
// d: out = x[i]·cos[i] - x[i+half]·sin[i] for i < half, and x[i]·cos[i] +
// x[i-half]·sin[i] otherwise, in float32, rounded to T once.
func rope[T any, C codec[T]](c C, t gpu.Thread, out, x, cs, sn []T, d int) {
	if j := t.GlobalX(); j < len(out) {
		half := d / 2
		var r float32
		if j%d < half {
			r = -c.load(x[j+half])
		} else {
			r = c.load(x[j-half])
		}
		out[j] = c.store(c.load(x[j])*c.load(cs[j]) + r*c.load(sn[j]))
	}
}

//kern:kernel block=256
func ropeF32(t gpu.Thread, out, x, cs, sn []float32, d int) { rope(f32c{}, t, out, x, cs, sn, d) }

//kern:kernel block=256
func ropeF16(t gpu.Thread, out, x, cs, sn []gpu.Half, d int) { rope(f16c{}, t, out, x, cs, sn, d) }

//kern:kernel block=256
func ropeBF16(t gpu.Thread, out, x, cs, sn []gpu.BFloat16, d int) {
	rope(bf16c{}, t, out, x, cs, sn, d)
}

// ropeRun is the run function of a fused RoPE node n with inputs x, cos
// and sin, all of n's shape.
func ropeRun(n *node) runFn {
	shape := n.shape
	d := shape.Dimensions[shape.Rank()-1]
	var k *kern.Kernel
	switch shape.DType {
	case dtypes.Float32:
		k = ropeF32Kernel.Kernel()
	case dtypes.Float16:
		k = ropeF16Kernel.Kernel()
	default:
		k = ropeBF16Kernel.Kernel()
	}
	return func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, k.Launch(b.dev, kern.Cover(shape.Size()), out.arr.arg(), ins[0].arr.arg(), ins[1].arr.arg(),
			ins[2].arr.arg(), kern.ScalarArg(d))
	}
}

// matchRoPE returns (x, cos, sin) when add is x·cos + rotate_half(x)·sin
// over x's last axis, operands of Add and Mul in either order, cos and
// sin of x's shape (a broadcast node, when they were broadcast, which
// then runs and hands the kernel the full tensor).
func matchRoPE(add *node) (x, cos, sin *node) {
	if len(add.inputs) != 2 || add.shape.Rank() == 0 || add.shape.Dimensions[add.shape.Rank()-1]%2 != 0 {
		return nil, nil, nil
	}
	for i, a := range add.inputs {
		b := add.inputs[1-i]
		if !isOp(a, backends.OpTypeMul) || !isOp(b, backends.OpTypeMul) || len(a.inputs) != 2 || len(b.inputs) != 2 {
			continue
		}
		for j, rot := range b.inputs {
			x := rotateHalfOf(rot)
			if x == nil {
				continue
			}
			for k, y := range a.inputs {
				cos, sin := a.inputs[1-k], b.inputs[1-j]
				if y == x && x.shape.Equal(add.shape) && cos.shape.Equal(add.shape) && sin.shape.Equal(add.shape) {
					return x, cos, sin
				}
			}
		}
	}
	return nil, nil, nil
}

// rotateHalfOf returns x when rot is Concatenate(Neg(x[..., half:]),
// x[..., :half]) along x's last axis.
func rotateHalfOf(rot *node) *node {
	if !isOp(rot, backends.OpTypeConcatenate) || len(rot.inputs) != 2 || rot.shape.Rank() == 0 {
		return nil
	}
	last := rot.shape.Rank() - 1
	if !slices.Equal(rot.axes, []int{last}) {
		return nil
	}
	neg, lo := rot.inputs[0], rot.inputs[1]
	if !isOp(neg, backends.OpTypeNeg) {
		return nil
	}
	hi := neg.inputs[0]
	if !isOp(hi, backends.OpTypeSlice) || !isOp(lo, backends.OpTypeSlice) || hi.inputs[0] != lo.inputs[0] {
		return nil
	}
	x := hi.inputs[0]
	d := x.shape.Dimensions
	// A strided Slice records no window (starts is nil).
	if !x.shape.Equal(rot.shape) || len(hi.starts) != len(d) || len(lo.starts) != len(d) {
		return nil
	}
	for ax := range d {
		h0, h1, l0, l1 := 0, d[ax], 0, d[ax]
		if ax == last {
			h0, l1 = d[ax]/2, d[ax]/2
		}
		if hi.starts[ax] != h0 || hi.limits[ax] != h1 || lo.starts[ax] != l0 || lo.limits[ax] != l1 {
			return nil
		}
	}
	return x
}
