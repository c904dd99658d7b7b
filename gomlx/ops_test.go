package gomlx

// Every op the backend claims, on random shapes and every dtype it
// supports, against GoMLX's simplego backend, on the emulator and in
// native mode. TestOpCoverage fails when an op in supportedOps has no
// case here.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// opCase is one test: the ops it exercises, the dtypes it runs for, how
// to draw its inputs and how to record its graph.
type opCase struct {
	name   string
	ops    []backends.OpType
	dtypes []dtypes.DType
	inputs func(r *rand.Rand, dt dtypes.DType) []input
	fn     graphFn
	// gen, when set, draws both the inputs and a graph that depends on
	// them (a permutation, slice bounds), in place of inputs and fn.
	gen func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn)
	// host, when set, is the reference in place of simplego (for ops
	// simplego lacks): the output's flat values and dimensions.
	host func(ins []input) ([]float64, []int)
	// scale multiplies the absolute tolerance (terms summed per result).
	scale float64
}

var (
	floats  = []dtypes.DType{dtypes.Float32, dtypes.Float64, dtypes.Float16, dtypes.BFloat16}
	ints    = []dtypes.DType{dtypes.Int32, dtypes.Int64}
	numbers = slices.Concat(floats, ints)
	all     = append(slices.Clone(numbers), dtypes.Bool)
)

// randDims draws rank dimensions in [1, 5].
func randDims(r *rand.Rand, rank int) []int {
	d := make([]int, rank)
	for i := range d {
		d[i] = 1 + r.IntN(5)
	}
	return d
}

// one draws a single input of random shape (rank 0 to 3).
func one(vr valueRange) func(r *rand.Rand, dt dtypes.DType) []input {
	return func(r *rand.Rand, dt dtypes.DType) []input {
		return []input{randInput(r, shapes.Make(dt, randDims(r, r.IntN(4))...), vr, 0)}
	}
}

// two draws two inputs of one random shape.
func two(va, vb valueRange) func(r *rand.Rand, dt dtypes.DType) []input {
	return func(r *rand.Rand, dt dtypes.DType) []input {
		s := shapes.Make(dt, randDims(r, r.IntN(4))...)
		return []input{randInput(r, s, va, 0), randInput(r, s, vb, 0)}
	}
}

func unaryCase(op backends.OpType, dts []dtypes.DType, vr valueRange,
	f func(backends.Builder, backends.Op) (backends.Op, error)) opCase {
	return opCase{name: op.String(), ops: []backends.OpType{op}, dtypes: dts, inputs: one(vr),
		fn: func(b backends.Builder, p []backends.Op) (backends.Op, error) { return f(b, p[0]) }}
}

func binaryCase(op backends.OpType, dts []dtypes.DType, va, vb valueRange,
	f func(backends.Builder, backends.Op, backends.Op) (backends.Op, error)) opCase {
	return opCase{name: op.String(), ops: []backends.OpType{op}, dtypes: dts, inputs: two(va, vb),
		fn: func(b backends.Builder, p []backends.Op) (backends.Op, error) { return f(b, p[0], p[1]) }}
}

type B = backends.Builder
type O = backends.Op

func opCases() []opCase {
	cs := []opCase{
		unaryCase(backends.OpTypeNeg, numbers, anyValue, B.Neg),
		unaryCase(backends.OpTypeAbs, numbers, anyValue, B.Abs),
		unaryCase(backends.OpTypeSign, numbers, anyValue, B.Sign),
		unaryCase(backends.OpTypeExp, floats, anyValue, B.Exp),
		unaryCase(backends.OpTypeLog, floats, positive, B.Log),
		unaryCase(backends.OpTypeSqrt, floats, positive, B.Sqrt),
		unaryCase(backends.OpTypeRsqrt, floats, positive, B.Rsqrt),
		unaryCase(backends.OpTypeTanh, floats, anyValue, B.Tanh),
		unaryCase(backends.OpTypeLogistic, floats, anyValue, B.Logistic),
		unaryCase(backends.OpTypeSin, floats, anyValue, B.Sin),
		unaryCase(backends.OpTypeCos, floats, anyValue, B.Cos),
		unaryCase(backends.OpTypeErf, floats, anyValue, B.Erf),
		unaryCase(backends.OpTypeFloor, floats, anyValue, B.Floor),
		unaryCase(backends.OpTypeCeil, floats, anyValue, B.Ceil),
		unaryCase(backends.OpTypeRound, floats, anyValue, B.Round),
		unaryCase(backends.OpTypeIsFinite, floats, anyValue, B.IsFinite),
		unaryCase(backends.OpTypeIsNaN, floats, anyValue, B.IsNaN),
		unaryCase(backends.OpTypeBitwiseNot, ints, anyValue, B.BitwiseNot),
		unaryCase(backends.OpTypeLogicalNot, []dtypes.DType{dtypes.Bool}, anyValue, B.LogicalNot),
		unaryCase(backends.OpTypeIdentity, all, anyValue, B.Identity),

		binaryCase(backends.OpTypeAdd, numbers, anyValue, anyValue, B.Add),
		binaryCase(backends.OpTypeSub, numbers, anyValue, anyValue, B.Sub),
		binaryCase(backends.OpTypeMul, numbers, anyValue, anyValue, B.Mul),
		binaryCase(backends.OpTypeDiv, numbers, anyValue, nonZero, B.Div),
		binaryCase(backends.OpTypeMax, numbers, anyValue, anyValue, B.Max),
		binaryCase(backends.OpTypeMin, numbers, anyValue, anyValue, B.Min),
		binaryCase(backends.OpTypeRem, numbers, anyValue, nonZero, B.Rem),
		binaryCase(backends.OpTypePow, floats, positive, anyValue, B.Pow),
		binaryCase(backends.OpTypeBitwiseAnd, ints, anyValue, anyValue, B.BitwiseAnd),
		binaryCase(backends.OpTypeBitwiseOr, ints, anyValue, anyValue, B.BitwiseOr),
		binaryCase(backends.OpTypeBitwiseXor, ints, anyValue, anyValue, B.BitwiseXor),
		binaryCase(backends.OpTypeLogicalAnd, []dtypes.DType{dtypes.Bool}, anyValue, anyValue, B.LogicalAnd),
		binaryCase(backends.OpTypeLogicalOr, []dtypes.DType{dtypes.Bool}, anyValue, anyValue, B.LogicalOr),
		binaryCase(backends.OpTypeLogicalXor, []dtypes.DType{dtypes.Bool}, anyValue, anyValue, B.LogicalXor),
		binaryCase(backends.OpTypeEqual, numbers, anyValue, anyValue, B.Equal),
		binaryCase(backends.OpTypeNotEqual, numbers, anyValue, anyValue, B.NotEqual),
		binaryCase(backends.OpTypeLessThan, numbers, anyValue, anyValue, B.LessThan),
		binaryCase(backends.OpTypeLessOrEqual, numbers, anyValue, anyValue, B.LessOrEqual),
		binaryCase(backends.OpTypeGreaterThan, numbers, anyValue, anyValue, B.GreaterThan),
		binaryCase(backends.OpTypeGreaterOrEqual, numbers, anyValue, anyValue, B.GreaterOrEqual),
	}
	return append(append(cs, structuralCases()...), rngCase())
}

// TestOps runs every case for two random draws per dtype.
//
// simplego has no float16, so a float16 case is checked against the same
// graph in float32 (drawn from a copy of the random state, so its shapes
// are the same) on the float16 inputs widened exactly; the tolerance is
// float16's.
func TestOps(t *testing.T) {
	for ci, c := range opCases() {
		gen := c.gen
		if gen == nil {
			gen = func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) { return c.inputs(r, dt), c.fn }
		}
		for _, dt := range c.dtypes {
			t.Run(fmt.Sprintf("%s/%s", c.name, dt), func(t *testing.T) {
				pcg := rand.NewPCG(uint64(ci), uint64(dt))
				for draw := range 2 {
					saved := *pcg
					ins, fn := gen(rand.New(pcg), dt)
					refDT := dt
					if dt == dtypes.Float16 {
						refDT = dtypes.Float32
					}
					referenceF32 = true
					_, refFn := gen(rand.New(&saved), refDT)
					referenceF32 = false
					checkCase(t, c, devices, fn, ins, refFn, widenF16(ins), draw)
				}
			})
		}
	}
}

// referenceF32 is set while the reference graph is drawn, for graphs
// that name float16 themselves (ConvertDType to float16 is checked
// against a conversion to float32).
var referenceF32 bool

// widenF16 converts float16 inputs to float32 (exactly).
func widenF16(ins []input) []input {
	out := make([]input, len(ins))
	for i, in := range ins {
		out[i] = in
		if in.shape.DType == dtypes.Float16 {
			f := toFloat64(in.flat)
			w := make([]float32, len(f))
			for j, v := range f {
				w[j] = float32(v)
			}
			out[i] = input{shape: shapes.Make(dtypes.Float32, in.shape.Dimensions...), flat: w}
		}
	}
	return out
}

// checkCase runs fn on each kern device and refFn on simplego, and
// compares.
func checkCase(t *testing.T, c opCase, devs []string, fn graphFn, ins []input, refFn graphFn, refIns []input, draw int) {
	t.Helper()
	var want []float64
	var dims []int
	if c.host != nil {
		want, dims = c.host(ins)
	} else {
		flat, shape, err := run(t, backendFor(t, "go"), refFn, refIns...)
		if err != nil {
			t.Fatalf("draw %d: simplego: %v (inputs %v)", draw, err, inputShapes(refIns))
		}
		want, dims = toFloat64(flat), shape.Dimensions
	}
	scale := max(c.scale, 1)
	for _, d := range devs {
		got, gshape, err := run(t, backendFor(t, d), fn, ins...)
		if err != nil {
			t.Fatalf("draw %d on %s: %v (inputs %v)", draw, d, err, inputShapes(ins))
		}
		if !slices.Equal(gshape.Dimensions, dims) {
			t.Fatalf("draw %d on %s: output %s, the reference's dimensions %v", draw, d, gshape, dims)
		}
		checkClose(t, fmt.Sprintf("draw %d on %s, inputs %v", draw, d, inputShapes(ins)), gshape.DType, toFloat64(got), want, scale)
	}
}

func inputShapes(ins []input) []shapes.Shape {
	s := make([]shapes.Shape, len(ins))
	for i, in := range ins {
		s[i] = in.shape
	}
	return s
}

// TestOpsSanitized runs the cases whose kernels use shared memory and
// barriers (the tiled matmul, block sums), atomics or computed offsets
// on the emulator with memcheck, racecheck (shared memory) and synccheck
// on: a report fails the launch.
func TestOpsSanitized(t *testing.T) {
	checked := []string{"DotGeneralTiled", "ReduceSumLongRows", "ScatterSum", "Gather", "Concatenate", "Pad", "Transpose",
		"DynamicSlice", "DynamicUpdateSlice"}
	for ci, c := range opCases() {
		if !slices.Contains(checked, c.name) {
			continue
		}
		gen := c.gen
		if gen == nil {
			gen = func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) { return c.inputs(r, dt), c.fn }
		}
		dt := c.dtypes[0]
		t.Run(fmt.Sprintf("%s/%s", c.name, dt), func(t *testing.T) {
			ins, fn := gen(rand.New(rand.NewPCG(uint64(ci), 99)), dt)
			checkCase(t, c, []string{"emu-checked"}, fn, ins, fn, ins, 0)
		})
	}
}

// TestOpCoverage: every op the backend claims has a case.
func TestOpCoverage(t *testing.T) {
	tested := map[backends.OpType]bool{backends.OpTypeParameter: true}
	for _, c := range opCases() {
		for _, op := range c.ops {
			tested[op] = true
		}
	}
	for _, op := range supportedOps {
		if !tested[op] {
			t.Errorf("op %s is in supportedOps but no case in ops_test.go tests it", op)
		}
	}
}
