package gomlx

// Graph recording: Builder methods append nodes; Compile (exec.go) turns
// them into a plan.

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/gokern/kern"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/notimplemented"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/x448/float16"
)

// runFn computes a node's value from its inputs' values. It returns a
// new buffer, never one of its inputs: Execute frees intermediates.
type runFn func(b *Backend, ins []*Buffer) (*Buffer, error)

// node is one recorded op: its output shape, inputs and how to run it.
type node struct {
	idx    int
	op     backends.OpType
	shape  shapes.Shape
	inputs []*node
	param  int     // the parameter number, for OpTypeParameter
	value  *Buffer // the uploaded value, for OpTypeConstant
	run    runFn
	b      *Builder
	// For fusion.go: the axes a reduction reduces, and whether the node
	// is a broadcast an element-wise op inserted for an operand.
	axes      []int
	broadcast bool
	// scalar is a single-element constant's value, for matching.
	scalar *float64
	// starts and limits are a Slice's window, set only when all its
	// strides are 1 (for matching). A Concatenate's axis is axes[0].
	starts, limits []int
}

// Builder records a computation. It implements backends.Builder; the ops
// it does not implement come from notimplemented.Builder and fail with
// an error naming the op.
type Builder struct {
	notimplemented.Builder
	backend  *Backend
	name     string
	nodes    []*node
	params   []*node
	compiled bool
	// metas are the per-node constants uploaded while recording (strides,
	// index maps), freed with the executable.
	metas []darray
	// fused names the patterns Compile replaced by one kernel.
	fused []string
}

var _ backends.Builder = (*Builder)(nil)

// Builder implements backends.Backend.
func (b *Backend) Builder(name string) backends.Builder {
	bl := &Builder{backend: b, name: name}
	bl.Builder.ErrFn = notImplemented
	return bl
}

// Name implements backends.Builder.
func (bl *Builder) Name() string { return bl.name }

// add records a node.
func (bl *Builder) add(op backends.OpType, shape shapes.Shape, run runFn, inputs ...*node) *node {
	n := &node{idx: len(bl.nodes), op: op, shape: shape, inputs: inputs, param: -1, run: run, b: bl}
	bl.nodes = append(bl.nodes, n)
	return n
}

// in converts the backends.Op arguments of op to this builder's nodes.
func (bl *Builder) in(op backends.OpType, ops ...backends.Op) ([]*node, error) {
	if bl.compiled {
		return nil, fmt.Errorf("backend kern: %s: builder %q was already compiled", op, bl.name)
	}
	ns := make([]*node, len(ops))
	for i, o := range ops {
		n, ok := o.(*node)
		if !ok || n == nil {
			return nil, fmt.Errorf("backend kern: %s: operand #%d is %T, not a kern node", op, i, o)
		}
		if n.b != bl {
			return nil, fmt.Errorf("backend kern: %s: operand #%d comes from builder %q, not %q", op, i, n.b.name, bl.name)
		}
		ns[i] = n
	}
	return ns, nil
}

// opErr wraps an error of recording op.
func opErr(op backends.OpType, err error) error {
	return fmt.Errorf("backend kern: %s: %w", op, err)
}

// need checks that table has a kernel for dt.
func need(op backends.OpType, table ktable, dt dtypes.DType) error {
	if table[dt] == nil {
		return fmt.Errorf("backend kern: %s: dtype %s is not supported", op, dt)
	}
	return nil
}

// OpShape implements backends.Builder.
func (bl *Builder) OpShape(op backends.Op) (shapes.Shape, error) {
	ns, err := bl.in(backends.OpTypeInvalid, op)
	if err != nil {
		return shapes.Invalid(), err
	}
	return ns[0].shape, nil
}

// Parameter implements backends.Builder.
func (bl *Builder) Parameter(name string, shape shapes.Shape, sharding *backends.ShardingSpec) (backends.Op, error) {
	if sharding != nil {
		return nil, fmt.Errorf("backend kern: Parameter %q: sharding is not supported", name)
	}
	if !supportedDType(shape.DType) {
		return nil, fmt.Errorf("backend kern: Parameter %q: dtype %s is not supported (supported: %v)", name, shape.DType, storedDTypes)
	}
	n := bl.add(backends.OpTypeParameter, shape, nil)
	n.param = len(bl.params)
	bl.params = append(bl.params, n)
	return n, nil
}

// Constant implements backends.Builder: the value is uploaded now, once.
func (bl *Builder) Constant(flat any, dims ...int) (backends.Op, error) {
	ft := reflect.TypeOf(flat)
	if ft == nil || ft.Kind() != reflect.Slice {
		return nil, opErr(backends.OpTypeConstant, fmt.Errorf("flat value %T is not a slice", flat))
	}
	shape := shapes.Make(dtypes.FromGoType(ft.Elem()), dims...)
	v, err := bl.backend.uploadFlat(&bl.backend.transfers.Meta, flat, shape)
	if err != nil {
		return nil, opErr(backends.OpTypeConstant, err)
	}
	n := bl.add(backends.OpTypeConstant, shape, nil)
	n.value = v
	if shape.Size() == 1 && shape.DType.IsFloat() {
		f := toF64(flat)
		n.scalar = &f
	}
	bl.metas = append(bl.metas, v.arr)
	return n, nil
}

// Identity implements backends.Builder (a copy).
func (bl *Builder) Identity(x backends.Op) (backends.Op, error) {
	return bl.copyOp(backends.OpTypeIdentity, x)
}

// DistributedSPMD implements backends.Builder: one device only.
func (bl *Builder) DistributedSPMD(numDevices int) error {
	if numDevices == 1 {
		return nil
	}
	return fmt.Errorf("backend kern: DistributedSPMD(%d): the backend runs on one device", numDevices)
}

// DistributedAutoSharding implements backends.Builder: not supported.
func (bl *Builder) DistributedAutoSharding(meshes ...backends.Mesh) error {
	return fmt.Errorf("backend kern: DistributedAutoSharding: the backend runs on one device")
}

// DeviceAssignment implements backends.Builder: device 0 only.
func (bl *Builder) DeviceAssignment(devices ...backends.DeviceNum) error {
	if len(devices) == 1 && devices[0] == 0 {
		return nil
	}
	return fmt.Errorf("backend kern: DeviceAssignment(%v): the backend has only device 0", devices)
}

// meta uploads per-node int32 constants (strides, index maps) once, while
// recording.
func (bl *Builder) meta(vals ...[]int) (*kern.Buffer[int32], error) {
	var flat []int32
	for _, v := range vals {
		for _, x := range v {
			if x != int(int32(x)) {
				return nil, fmt.Errorf("dimension or stride %d does not fit the kernels' int32 index maps (tensors up to 2³¹-1 elements)", x)
			}
			flat = append(flat, int32(x))
		}
	}
	if len(flat) == 0 {
		flat = []int32{0}
	}
	buf, err := upload(bl.backend.dev, &bl.backend.transfers.Meta, flat)
	if err != nil {
		return nil, err
	}
	bl.metas = append(bl.metas, typed[int32]{buf})
	return buf, nil
}

// strides returns the row-major strides of dims.
func strides(dims []int) []int {
	s := make([]int, len(dims))
	acc := 1
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= dims[i]
	}
	return s
}

// notImplemented is the error of an op the backend lacks. It names the
// op and the backends that have it, so the user knows where to go.
func notImplemented(op backends.OpType) error {
	where := "GoMLX's xla backend"
	if slices.Contains(simplegoOps, op) {
		where = `GoMLX's "go" (simplego) and xla backends`
	}
	return fmt.Errorf("backend kern: op %s is not implemented (docs/gomlx.md lists the ops it has); %s implement it: %w",
		op, where, notimplemented.NotImplementedError)
}

// toF64 is the first value of a flat float slice as a float64.
func toF64(flat any) float64 {
	switch f := flat.(type) {
	case []float32:
		return float64(f[0])
	case []float64:
		return f[0]
	case []float16.Float16:
		return float64(f[0].Float32())
	case []bfloat16.BFloat16:
		return float64(f[0].Float32())
	}
	return math.NaN()
}
