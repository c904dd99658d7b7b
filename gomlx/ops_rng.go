package gomlx

// RNGBitGenerator: two nodes read the state, one drawing the bits and one
// advancing the counter (kernels_rng.go), so the op needs no
// multi-output node.

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// RNGBitGenerator implements backends.Builder for uint32 and uint64 bits.
func (bl *Builder) RNGBitGenerator(state backends.Op, shape shapes.Shape) (newState, values backends.Op, err error) {
	op := backends.OpTypeRNGBitGenerator
	ns, err := bl.in(op, state)
	if err != nil {
		return nil, nil, err
	}
	if !ns[0].shape.Equal(backends.RNGStateShape) {
		return nil, nil, opErr(op, fmt.Errorf("state %s, want %s", ns[0].shape, backends.RNGStateShape))
	}
	var k *kern.Kernel
	switch shape.DType {
	case dtypes.Uint32:
		k = rngBits32Kernel.Kernel()
	case dtypes.Uint64:
		k = rngBits64Kernel.Kernel()
	default:
		return nil, nil, opErr(op, fmt.Errorf("bits of dtype %s are not supported (uint32, uint64)", shape.DType))
	}
	n := shape.Size()
	bits := bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, k.Launch(b.dev, kern.Cover(n), out.arr.arg(), ins[0].arr.arg())
	}, ns[0])
	st := ns[0].shape
	next := bl.add(op, st, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(st)
		if err != nil {
			return nil, err
		}
		return out, rngAdvanceKernel.Kernel().Launch(b.dev, kern.Cover(st.Size()), out.arr.arg(), ins[0].arr.arg(), kern.ScalarArg(n))
	}, ns[0])
	return next, bits, nil
}
