package gomlx

// Cases for the ops whose graphs depend on the drawn shapes: selection,
// conversion, shape ops, gather, reductions and contractions.

import (
	"math/rand/v2"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

type genFn = func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn)

func genCase(name string, ops []backends.OpType, dts []dtypes.DType, scale float64, gen genFn) opCase {
	return opCase{name: name, ops: ops, dtypes: dts, gen: gen, scale: scale}
}

func opList(o ...backends.OpType) []backends.OpType { return o }

func structuralCases() []opCase {
	return []opCase{
		genCase("Where", opList(backends.OpTypeWhere), all, 1, genWhere),
		genCase("BroadcastBinary", opList(backends.OpTypeAdd, backends.OpTypeMul), numbers, 1, genBroadcastBinary),
		genCase("Clamp", opList(backends.OpTypeClamp), numbers, 1, func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			s := shapes.Make(dt, randDims(r, 2)...)
			lo, hi := randInput(r, shapes.Make(dt), anyValue, 0), randInput(r, shapes.Make(dt), anyValue, 0)
			return []input{lo, randInput(r, s, anyValue, 0), hi}, func(b B, p []O) (O, error) { return b.Clamp(p[0], p[1], p[2]) }
		}),
		genCase("Constant", opList(backends.OpTypeConstant), []dtypes.DType{dtypes.Float32, dtypes.Int32}, 1, func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			in := randInput(r, shapes.Make(dt, 2, 3), anyValue, 0)
			c := randInput(r, shapes.Make(dt, 2, 3), anyValue, 0)
			return []input{in}, func(b B, p []O) (O, error) {
				k, err := b.Constant(c.flat, 2, 3)
				if err != nil {
					return nil, err
				}
				return b.Add(p[0], k)
			}
		}),
		genCase("ConvertDType", opList(backends.OpTypeConvertDType), all, 1, genConvert),
		genCase("Iota", opList(backends.OpTypeIota), numbers, 1, func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			s := shapes.Make(dt, randDims(r, 1+r.IntN(3))...)
			axis := r.IntN(s.Rank())
			return nil, func(b B, _ []O) (O, error) { return b.Iota(s, axis) }
		}),
		genCase("Reshape", opList(backends.OpTypeReshape), all, 1, func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			d := randDims(r, 3)
			return []input{randInput(r, shapes.Make(dt, d...), anyValue, 0)}, func(b B, p []O) (O, error) {
				return b.Reshape(p[0], d[0]*d[1], d[2])
			}
		}),
		genCase("Transpose", opList(backends.OpTypeTranspose), all, 1, func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			d := randDims(r, 1+r.IntN(4))
			perm := r.Perm(len(d))
			return []input{randInput(r, shapes.Make(dt, d...), anyValue, 0)}, func(b B, p []O) (O, error) {
				return b.Transpose(p[0], perm...)
			}
		}),
		genCase("BroadcastInDim", opList(backends.OpTypeBroadcastInDim), all, 1, func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			out := randDims(r, 3)
			axes := []int{0, 2}
			in := []int{out[0], out[2]}
			if r.IntN(2) == 0 {
				in[0] = 1 // broadcast a dimension of 1 too
			}
			return []input{randInput(r, shapes.Make(dt, in...), anyValue, 0)}, func(b B, p []O) (O, error) {
				return b.BroadcastInDim(p[0], shapes.Make(dt, out...), axes)
			}
		}),
		genCase("Slice", opList(backends.OpTypeSlice), all, 1, func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			d := []int{2 + r.IntN(5), 2 + r.IntN(5)}
			var starts, limits, steps []int
			for _, n := range d {
				s := r.IntN(n - 1)
				starts = append(starts, s)
				limits = append(limits, s+1+r.IntN(n-s))
				steps = append(steps, 1+r.IntN(2))
			}
			return []input{randInput(r, shapes.Make(dt, d...), anyValue, 0)}, func(b B, p []O) (O, error) {
				return b.Slice(p[0], starts, limits, steps)
			}
		}),
		genCase("Concatenate", opList(backends.OpTypeConcatenate), all, 1, func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			d := randDims(r, 3)
			axis := r.IntN(3)
			var ins []input
			for range 3 {
				e := slices.Clone(d)
				e[axis] = 1 + r.IntN(3)
				ins = append(ins, randInput(r, shapes.Make(dt, e...), anyValue, 0))
			}
			return ins, func(b B, p []O) (O, error) { return b.Concatenate(axis, p...) }
		}),
		{name: "Reverse", ops: opList(backends.OpTypeReverse), dtypes: all, inputs: one3, fn: func(b B, p []O) (O, error) {
			s, err := b.OpShape(p[0])
			if err != nil {
				return nil, err
			}
			return b.Reverse(p[0], reverseAxis(s.Dimensions))
		}, host: hostReverse},
		{name: "Pad", ops: opList(backends.OpTypePad), dtypes: all, inputs: padInputs, fn: func(b B, p []O) (O, error) {
			s, err := b.OpShape(p[0])
			if err != nil {
				return nil, err
			}
			return b.Pad(p[0], p[1], padConfig(s.Dimensions)...)
		}, host: hostPad},
		genCase("Gather", opList(backends.OpTypeGather), all, 1, genGather),
		// simplego v0.26.0 has neither: checked against hostDynamic.
		withHost(genCase("DynamicSlice", opList(backends.OpTypeDynamicSlice), all, 1, genDynamic(false)), hostDynamic),
		withHost(genCase("DynamicUpdateSlice", opList(backends.OpTypeDynamicUpdateSlice), all, 1, genDynamic(true)), hostDynamic),
		genCase("ScatterSum", opList(backends.OpTypeScatterSum), numbers, 4, genScatter),
		genCase("Reduce", opList(backends.OpTypeReduceSum, backends.OpTypeReduceProduct, backends.OpTypeReduceMax, backends.OpTypeReduceMin), numbers, 5, genReduce),
		// simplego v0.26.0 panics on integer DotGeneral: integer dots are
		// checked against hostDot.
		withHost(genCase("DotGeneral", opList(backends.OpTypeDotGeneral), ints, 1, genDotGeneral), hostDot),
		withHost(genCase("Dot", opList(backends.OpTypeDot), ints, 1, genDot), hostDot),
		// Rows of at least blockRowMin elements (v2, a block per row),
		// against float64: simplego sums bfloat16 in bfloat16, which over
		// hundreds of terms is off by more than the values themselves.
		withHost(genCase("ReduceSumLongRows", opList(backends.OpTypeReduceSum), numbers, 40, func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			d := []int{1 + r.IntN(3), blockRowMin + r.IntN(300)}
			return []input{randInput(r, shapes.Make(dt, d...), anyValue, 0)}, func(b B, p []O) (O, error) {
				return b.ReduceSum(p[0], longRowAxes(d)...)
			}
		}), hostLongRowSum),
		genCase("ReduceLogical", opList(backends.OpTypeReduceLogicalAnd, backends.OpTypeReduceLogicalOr, backends.OpTypeReduceLogicalXor), []dtypes.DType{dtypes.Bool}, 1, genReduce),
		genCase("ArgMinMax", opList(backends.OpTypeArgMinMax), numbers, 1, func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			d := randDims(r, 3)
			axis, isMin := r.IntN(3), r.IntN(2) == 1
			out := []dtypes.DType{dtypes.Int32, dtypes.Int64}[r.IntN(2)]
			return []input{randInput(r, shapes.Make(dt, d...), anyValue, 0)}, func(b B, p []O) (O, error) {
				return b.ArgMinMax(p[0], axis, out, isMin)
			}
		}),
		genCase("DotGeneral", opList(backends.OpTypeDotGeneral), floats, 8, genDotGeneral),
		genCase("Dot", opList(backends.OpTypeDot), floats, 8, genDot),
		genCase("DotGeneralTiled", opList(backends.OpTypeDotGeneral), floats, 16, func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			// M, N ≥ tileDim: v2, with partial edge tiles and K not a
			// multiple of the tile.
			bs, m, k, n := 1+r.IntN(2), tileDim+r.IntN(25), 1+r.IntN(40), tileDim+r.IntN(25)
			return []input{randInput(r, shapes.Make(dt, bs, m, k), anyValue, 0), randInput(r, shapes.Make(dt, bs, k, n), anyValue, 0)},
				func(b B, p []O) (O, error) { return b.DotGeneral(p[0], []int{2}, []int{0}, p[1], []int{1}, []int{0}) }
		}),
	}
}

func genWhere(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
	d := randDims(r, 2)
	cond := shapes.Make(dtypes.Bool, d...)
	onFalse := shapes.Make(dt, d...)
	if r.IntN(2) == 0 {
		onFalse = shapes.Make(dt) // a scalar branch
	}
	ins := []input{randInput(r, cond, anyValue, 0), randInput(r, shapes.Make(dt, d...), anyValue, 0), randInput(r, onFalse, anyValue, 0)}
	return ins, func(b B, p []O) (O, error) { return b.Where(p[0], p[1], p[2]) }
}

// genBroadcastBinary: an operand with dimensions of 1 (broadcast by a
// strided copy) and a scalar one (broadcast by a zero stride).
func genBroadcastBinary(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
	d := randDims(r, 2)
	ins := []input{randInput(r, shapes.Make(dt, d...), anyValue, 0), randInput(r, shapes.Make(dt, 1, d[1]), anyValue, 0),
		randInput(r, shapes.Make(dt), anyValue, 0)}
	return ins, func(b B, p []O) (O, error) {
		s, err := b.Add(p[0], p[1])
		if err != nil {
			return nil, err
		}
		return b.Mul(p[2], s)
	}
}

func genConvert(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
	to := all[r.IntN(len(all))]
	if to == dtypes.Float16 && referenceF32 {
		to = dtypes.Float32
	}
	in := randInput(r, shapes.Make(dt, randDims(r, 2)...), anyValue, 0)
	return []input{in}, func(b B, p []O) (O, error) { return b.ConvertDType(p[0], to) }
}

// genGather draws an embedding lookup (rows of a [V, D] table by [N, 1]
// indices, the way graph.Gather records it) or a gather of [2, 2]
// windows at 2-D start indices, which exercises clamping.
func genGather(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
	idt := []dtypes.DType{dtypes.Int32, dtypes.Int64}[r.IntN(2)]
	v, d, n := 2+r.IntN(6), 1+r.IntN(4), 1+r.IntN(5)
	table := randInput(r, shapes.Make(dt, v, d), anyValue, 0)
	if r.IntN(2) == 0 {
		idx := randInput(r, shapes.Make(idt, n, 1), index, v)
		return []input{table, idx}, func(b B, p []O) (O, error) {
			return b.Gather(p[0], p[1], 1, []int{1}, []int{0}, []int{0}, []int{1, d}, false)
		}
	}
	table = randInput(r, shapes.Make(dt, v, d+1), anyValue, 0)
	idx := randInput(r, shapes.Make(idt, n, 2), index, v+1) // may start past the end: clamped
	return []input{table, idx}, func(b B, p []O) (O, error) {
		return b.Gather(p[0], p[1], 1, []int{1, 2}, nil, []int{0, 1}, []int{2, 2}, false)
	}
}

func genReduce(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
	d := randDims(r, 3)
	var axes []int
	for a := range 3 {
		if r.IntN(2) == 0 {
			axes = append(axes, a)
		}
	}
	vr := anyValue
	fns := []func(B, O, ...int) (O, error){B.ReduceSum, B.ReduceProduct, B.ReduceMax, B.ReduceMin}
	if dt == dtypes.Bool {
		fns = []func(B, O, ...int) (O, error){B.ReduceLogicalAnd, B.ReduceLogicalOr, B.ReduceLogicalXor}
	}
	f := fns[r.IntN(len(fns))]
	return []input{randInput(r, shapes.Make(dt, d...), vr, 0)}, func(b B, p []O) (O, error) { return f(b, p[0], axes...) }
}

// genDotGeneral: lhs [K, B, M] and rhs [B, N, K] (neither in matmul
// order, so both are transposed), or plain [M, K]·[K, N].
func genDotGeneral(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
	bs, m, k, n := 1+r.IntN(3), 1+r.IntN(5), 1+r.IntN(8), 1+r.IntN(5)
	if r.IntN(2) == 0 {
		return []input{randInput(r, shapes.Make(dt, m, k), anyValue, 0), randInput(r, shapes.Make(dt, k, n), anyValue, 0)},
			func(b B, p []O) (O, error) { return b.DotGeneral(p[0], []int{1}, nil, p[1], []int{0}, nil) }
	}
	return []input{randInput(r, shapes.Make(dt, k, bs, m), anyValue, 0), randInput(r, shapes.Make(dt, bs, n, k), anyValue, 0)},
		func(b B, p []O) (O, error) { return b.DotGeneral(p[0], []int{0}, []int{1}, p[1], []int{2}, []int{0}) }
}

// one3 draws one input of rank 3.
func one3(r *rand.Rand, dt dtypes.DType) []input {
	return []input{randInput(r, shapes.Make(dt, randDims(r, 3)...), anyValue, 0)}
}

// simplego v0.26.0 has neither Reverse nor Pad, so their references are
// computed here, from parameters derived from the input's dimensions.

func reverseAxis(d []int) int { return (d[0] + d[1] + d[2]) % 3 }

func hostReverse(ins []input) ([]float64, []int) {
	d := ins[0].shape.Dimensions
	x := toFloat64(ins[0].flat)
	a := reverseAxis(d)
	st := strides(d)
	out := make([]float64, len(x))
	for i := range out {
		idx := (i / st[a]) % d[a]
		out[i] = x[i+(d[a]-1-2*idx)*st[a]]
	}
	return out, d
}

func padInputs(r *rand.Rand, dt dtypes.DType) []input {
	return []input{randInput(r, shapes.Make(dt, randDims(r, 2)...), anyValue, 0), randInput(r, shapes.Make(dt), anyValue, 0)}
}

func padConfig(d []int) []backends.PadAxis {
	return []backends.PadAxis{{Start: d[0] % 3, End: d[1] % 3, Interior: (d[0] + d[1]) % 2}, {Start: d[1] % 2, End: d[0] % 2}}
}

func hostPad(ins []input) ([]float64, []int) {
	d := ins[0].shape.Dimensions
	x, fill := toFloat64(ins[0].flat), toFloat64(ins[1].flat)[0]
	cfg := padConfig(d)
	out := make([]int, 2)
	for a, c := range cfg {
		out[a] = c.Start + c.End + d[a] + (d[a]-1)*c.Interior
	}
	res := make([]float64, out[0]*out[1])
	for i := range res {
		res[i] = fill
	}
	for i := range d[0] {
		for j := range d[1] {
			oi, oj := cfg[0].Start+i*(cfg[0].Interior+1), cfg[1].Start+j*(cfg[1].Interior+1)
			res[oi*out[1]+oj] = x[i*d[1]+j]
		}
	}
	return res, out
}

// genScatter draws the gradient of an embedding lookup (rows of updates
// [N, D] added into a [V, D] operand at [N, 1] indices, repeats
// included) or single elements added at [N, 2] indices.
func genScatter(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
	idt := []dtypes.DType{dtypes.Int32, dtypes.Int64}[r.IntN(2)]
	v, d, n := 2+r.IntN(4), 1+r.IntN(4), 1+r.IntN(8)
	operand := randInput(r, shapes.Make(dt, v, d), anyValue, 0)
	if r.IntN(2) == 0 {
		ins := []input{operand, randInput(r, shapes.Make(idt, n, 1), index, v), randInput(r, shapes.Make(dt, n, d), anyValue, 0)}
		return ins, func(b B, p []O) (O, error) {
			return b.ScatterSum(p[0], p[1], p[2], 1, []int{1}, []int{0}, []int{0}, false, false)
		}
	}
	idx := randInput(r, shapes.Make(idt, n, 2), index, min(v, d))
	ins := []input{operand, idx, randInput(r, shapes.Make(dt, n), anyValue, 0)}
	return ins, func(b B, p []O) (O, error) {
		return b.ScatterSum(p[0], p[1], p[2], 1, nil, []int{0, 1}, []int{0, 1}, false, false)
	}
}

func genDot(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
	m, k, n := 1+r.IntN(6), 1+r.IntN(8), 1+r.IntN(6)
	rhs := []int{k, n}
	if r.IntN(2) == 0 {
		rhs = []int{k} // matrix·vector
	}
	return []input{randInput(r, shapes.Make(dt, m, k), anyValue, 0), randInput(r, shapes.Make(dt, rhs...), anyValue, 0)},
		func(b B, p []O) (O, error) { return b.Dot(p[0], p[1]) }
}

func withHost(c opCase, host func([]input) ([]float64, []int)) opCase {
	c.host = host
	return c
}

// hostDot is the float64 reference of the layouts genDot and
// genDotGeneral draw: [m, k]·[k, n], [m, k]·[k], and [k, b, m]·[b, n, k]
// contracting k with batch b.
func hostDot(ins []input) ([]float64, []int) {
	l, r := toFloat64(ins[0].flat), toFloat64(ins[1].flat)
	ld, rd := ins[0].shape.Dimensions, ins[1].shape.Dimensions
	if len(ld) == 3 {
		k, bs, m, n := ld[0], ld[1], ld[2], rd[1]
		out := make([]float64, bs*m*n)
		for b := range bs {
			for i := range m {
				for j := range n {
					for p := range k {
						out[(b*m+i)*n+j] += l[(p*bs+b)*m+i] * r[(b*n+j)*k+p]
					}
				}
			}
		}
		return out, []int{bs, m, n}
	}
	m, k, n := ld[0], ld[1], 1
	dims := []int{m}
	if len(rd) == 2 {
		n = rd[1]
		dims = append(dims, n)
	}
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			for p := range k {
				out[i*n+j] += l[i*k+p] * r[p*n+j]
			}
		}
	}
	return out, dims
}

// longRowAxes: odd rows reduce axis 1, even ones the whole tensor (no
// axes given).
func longRowAxes(d []int) []int {
	if d[1]%2 == 1 {
		return []int{1}
	}
	return nil
}

func hostLongRowSum(ins []input) ([]float64, []int) {
	d := ins[0].shape.Dimensions
	x := toFloat64(ins[0].flat)
	if longRowAxes(d) == nil {
		var s float64
		for _, v := range x {
			s += v
		}
		return []float64{s}, nil
	}
	out := make([]float64, d[0])
	for i := range d[0] {
		for j := range d[1] {
			out[i] += x[i*d[1]+j]
		}
	}
	return out, []int{d[0]}
}

// genDynamic draws DynamicSlice (or, with update, DynamicUpdateSlice) of
// a [d0, d1] operand at start scalars (int32 and int64) that may lie
// outside the operand, which XLA clamps. The window is dynWindowDims of
// the operand's dimensions, so hostDynamic can know it.
func genDynamic(update bool) genFn {
	return func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
		d := []int{1 + r.IntN(6), 1 + r.IntN(6)}
		w := dynWindowDims(d)
		s0 := input{shape: shapes.Make(dtypes.Int32), flat: []int32{int32(r.IntN(d[0]+3) - 1)}}
		s1 := input{shape: shapes.Make(dtypes.Int64), flat: []int64{int64(r.IntN(d[1]+3) - 1)}}
		ins := []input{randInput(r, shapes.Make(dt, d...), anyValue, 0), s0, s1}
		if update {
			ins = append(ins, randInput(r, shapes.Make(dt, w...), anyValue, 0))
			return ins, func(b B, p []O) (O, error) { return b.DynamicUpdateSlice(p[0], p[3], []O{p[1], p[2]}) }
		}
		return ins, func(b B, p []O) (O, error) { return b.DynamicSlice(p[0], []O{p[1], p[2]}, w) }
	}
}

func dynWindowDims(d []int) []int { return []int{max(1, d[0]-1), (d[1] + 1) / 2} }

// hostDynamic is the float64 reference of genDynamic's graphs (an update
// is the fourth input).
func hostDynamic(ins []input) ([]float64, []int) {
	d := ins[0].shape.Dimensions
	x := toFloat64(ins[0].flat)
	w := dynWindowDims(d)
	start := []int{int(ins[1].flat.([]int32)[0]), int(ins[2].flat.([]int64)[0])}
	for k := range start {
		start[k] = min(max(start[k], 0), d[k]-w[k])
	}
	if len(ins) == 3 {
		out := make([]float64, w[0]*w[1])
		for i := range w[0] {
			for j := range w[1] {
				out[i*w[1]+j] = x[(start[0]+i)*d[1]+start[1]+j]
			}
		}
		return out, w
	}
	u := toFloat64(ins[3].flat)
	for i := range w[0] {
		for j := range w[1] {
			x[(start[0]+i)*d[1]+start[1]+j] = u[i*w[1]+j]
		}
	}
	return x, d
}
