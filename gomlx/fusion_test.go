package gomlx

// Fusion: graph.Softmax, Swish(x)·up, RMSNorm, GELU and rotate-half
// RoPE, recorded by GoMLX's graph package, run as one kernel each, with
// the results of the unfused graph (simplego's, and kern's with
// ",nofusion").

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
)

// fusionGraphs: each takes x and up of one shape.
var fusionGraphs = []struct {
	name, pattern string
	fn            func(x, up *graph.Node) []*graph.Node
	// near: the graph resembles the pattern but computes something else,
	// so it must not be fused.
	near bool
}{
	{"softmax", "softmax", func(x, _ *graph.Node) []*graph.Node { return []*graph.Node{graph.Softmax(x)} }, false},
	{"softmax and its exp", "softmax", func(x, _ *graph.Node) []*graph.Node {
		// An intermediate of the pattern is also an output: still computed.
		return []*graph.Node{graph.Softmax(x), graph.Exp(x)}
	}, false},
	{"rmsnorm", "rmsNorm", func(x, w *graph.Node) []*graph.Node {
		// w: the first row of up, a [cols] weight broadcast along rows.
		cols := x.Shape().Dimensions[1]
		weight := graph.Reshape(graph.Slice(w, graph.AxisRange(0, 1)), cols)
		ms := graph.ReduceAndKeep(graph.Square(x), graph.ReduceMean, -1)
		xn := graph.Mul(x, graph.Rsqrt(graph.AddScalar(ms, 1e-5)))
		return []*graph.Node{graph.Mul(xn, graph.BroadcastToDims(graph.InsertAxes(weight, 0), x.Shape().Dimensions...))}
	}, false},
	{"not rmsnorm: mean of x·up", "rmsNorm", func(x, up *graph.Node) []*graph.Node {
		ms := graph.ReduceAndKeep(graph.Mul(x, up), graph.ReduceMean, -1)
		return []*graph.Node{graph.Mul(graph.Mul(x, graph.Rsqrt(graph.AddScalar(graph.Abs(ms), 1e-5))), up)}
	}, true},
	{"not rmsnorm: sum, not mean", "rmsNorm", func(x, up *graph.Node) []*graph.Node {
		ss := graph.ReduceAndKeep(graph.Square(x), graph.ReduceSum, -1)
		return []*graph.Node{graph.Mul(graph.Mul(x, graph.Rsqrt(graph.AddScalar(ss, 1e-5))), up)}
	}, true},
	{"gelu", "gelu", func(x, _ *graph.Node) []*graph.Node { return []*graph.Node{activations.Gelu(x)} }, false},
	{"not gelu: tanh approximation", "gelu", func(x, _ *graph.Node) []*graph.Node {
		return []*graph.Node{activations.GeluApproximate(x)}
	}, true},
	{"gelu tanh", "geluTanh", func(x, _ *graph.Node) []*graph.Node {
		return []*graph.Node{activations.GeluApproximate(x)}
	}, false},
	{"not gelu tanh: x² for x³", "geluTanh", func(x, _ *graph.Node) []*graph.Node {
		inner := graph.Add(x, graph.MulScalar(graph.PowScalar(x, 2), 0.044715))
		cdf := graph.MulScalar(graph.OnePlus(graph.Tanh(graph.MulScalar(inner, math.Sqrt(2/math.Pi)))), 0.5)
		return []*graph.Node{graph.Mul(x, cdf)}
	}, true},
	{"swiglu", "siluMul", func(x, up *graph.Node) []*graph.Node {
		return []*graph.Node{graph.Mul(activations.Swish(x), up)}
	}, false},
	{"rope", "rope", func(x, up *graph.Node) []*graph.Node {
		return ropeGraph(x, up, 1, rotateHalf)
	}, false},
	{"rope, operands swapped", "rope", func(x, up *graph.Node) []*graph.Node {
		x, cos, sin := ropeOperands(x, up, 1)
		return []*graph.Node{graph.Add(graph.Mul(sin, rotateHalf(x, 1)), graph.Mul(cos, x))}
	}, false},
	{"rope, cos and sin of one row broadcast", "rope", func(x, up *graph.Node) []*graph.Node {
		x, cos, sin := ropeOperands(x, up, 1)
		cos, sin = graph.SliceAxis(cos, 0, graph.AxisRange(0, 1)), graph.SliceAxis(sin, 0, graph.AxisRange(1, 2))
		return []*graph.Node{graph.Add(graph.Mul(x, cos), graph.Mul(rotateHalf(x, 1), sin))}
	}, false},
	{"not rope: halves swapped without the negation", "rope", func(x, up *graph.Node) []*graph.Node {
		return ropeGraph(x, up, 1, func(x *graph.Node, axis int) *graph.Node {
			half := x.Shape().Dimensions[axis] / 2
			return graph.Concatenate([]*graph.Node{
				graph.SliceAxis(x, axis, graph.AxisRange(half)), graph.SliceAxis(x, axis, graph.AxisRange(0, half))}, axis)
		})
	}, true},
	{"not rope: rotated along the first axis", "rope", func(x, up *graph.Node) []*graph.Node {
		return ropeGraph(graph.Transpose(x, 0, 1), graph.Transpose(up, 0, 1), 0, rotateHalf)
	}, true},
}

// ropeOperands cuts x and up ([rows, cols] or [cols, rows]) to an even
// length along axis and makes cos and sin of up's angles (within ±2 rad:
// simplego's bfloat16 Sin and Cos of larger angles, scaled in bfloat16,
// differ from kern's unfused graph by more than checkClose allows).
func ropeOperands(x, up *graph.Node, axis int) (xe, cos, sin *graph.Node) {
	d := x.Shape().Dimensions[axis] &^ 1
	xe = graph.SliceAxis(x, axis, graph.AxisRange(0, d))
	a := graph.SliceAxis(up, axis, graph.AxisRange(0, d))
	return xe, graph.Cos(a), graph.Sin(a)
}

// ropeGraph is x·cos + rot(x)·sin along axis.
func ropeGraph(x, up *graph.Node, axis int, rot func(x *graph.Node, axis int) *graph.Node) []*graph.Node {
	x, cos, sin := ropeOperands(x, up, axis)
	return []*graph.Node{graph.Add(graph.Mul(x, cos), graph.Mul(rot(x, axis), sin))}
}

// rotateHalf is Concatenate(-x[half:], x[:half]) along axis, as
// Llama-style GoMLX code writes it.
func rotateHalf(x *graph.Node, axis int) *graph.Node {
	half := x.Shape().Dimensions[axis] / 2
	return graph.Concatenate([]*graph.Node{
		graph.Neg(graph.SliceAxis(x, axis, graph.AxisRange(half))), graph.SliceAxis(x, axis, graph.AxisRange(0, half))}, axis)
}

func TestFusion(t *testing.T) {
	for _, g := range fusionGraphs {
		for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
			t.Run(fmt.Sprintf("%s/%s", g.name, dt), func(t *testing.T) {
				r := rand.New(rand.NewPCG(1, uint64(dt)))
				s := shapes.Make(dt, 3, 2+r.IntN(40))
				x, up := randInput(r, s, anyValue, 0), randInput(r, s, anyValue, 0)
				want := execAll(t, backendFor(t, "go"), g.fn, x, up)
				for _, d := range devices {
					runs := map[string]int64{}
					for _, cfg := range []string{d, d + ",nofusion"} {
						be, err := New(cfg)
						if err != nil {
							t.Fatal(err)
						}
						got := execAll(t, be, g.fn, x, up)
						fused := be.(*Backend).Fusions()[g.pattern]
						runs[cfg] = be.(*Backend).TransferCounts().Runs.Load()
						be.Finalize()
						if wantFused := cfg == d && !g.near; (fused > 0) != wantFused {
							t.Errorf("%s on %s: %d fusions, want fused=%v", g.pattern, cfg, fused, wantFused)
						}
						for i := range got {
							checkClose(t, fmt.Sprintf("output %d on %s", i, cfg), dt, got[i], want[i], 1)
						}
					}
					// Fused, the pattern's inner nodes no longer run (unless
					// an output reads them).
					if fused, plain := runs[d], runs[d+",nofusion"]; !g.near && fused >= plain {
						t.Errorf("%s: %d nodes ran fused, %d unfused: want fewer fused", d, fused, plain)
					}
				}
			})
		}
	}
}

// execAll runs fn(x, up) on be and returns its outputs widened.
func execAll(t *testing.T, be backends.Backend, fn func(x, up *graph.Node) []*graph.Node, x, up input) [][]float64 {
	t.Helper()
	e, err := graph.NewExec(be, fn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Finalize()
	out, err := e.Exec(tensorOf(x), tensorOf(up))
	if err != nil {
		t.Fatalf("%s: %v", be.Name(), err)
	}
	res := make([][]float64, len(out))
	for i, o := range out {
		o.ConstFlatData(func(flat any) { res[i] = toFloat64(flat) })
	}
	return res
}

func tensorOf(in input) *tensors.Tensor {
	t := tensors.FromShape(in.shape)
	t.MutableFlatData(func(flat any) {
		copyFlat(flat, in.flat)
	})
	return t
}
