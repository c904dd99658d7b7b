package gomlx

// Fusion: graph.Softmax and Swish(x)·up, recorded by GoMLX's graph
// package, run as ops.Softmax and ops.SiLUMul, with the results of the
// unfused graph (simplego's, and kern's with ",nofusion").

import (
	"fmt"
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
}{
	{"softmax", "softmax", func(x, _ *graph.Node) []*graph.Node { return []*graph.Node{graph.Softmax(x)} }},
	{"softmax and its exp", "softmax", func(x, _ *graph.Node) []*graph.Node {
		// An intermediate of the pattern is also an output: still computed.
		return []*graph.Node{graph.Softmax(x), graph.Exp(x)}
	}},
	{"swiglu", "siluMul", func(x, up *graph.Node) []*graph.Node {
		return []*graph.Node{graph.Mul(activations.Swish(x), up)}
	}},
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
					for _, cfg := range []string{d, d + ",nofusion"} {
						be, err := New(cfg)
						if err != nil {
							t.Fatal(err)
						}
						got := execAll(t, be, g.fn, x, up)
						fused := be.(*Backend).Fusions()[g.pattern]
						be.Finalize()
						if wantFused := cfg == d; (fused > 0) != wantFused {
							t.Errorf("%s on %s: %d fusions, want fused=%v", g.pattern, cfg, fused, wantFused)
						}
						for i := range got {
							checkClose(t, fmt.Sprintf("output %d on %s", i, cfg), dt, got[i], want[i], 1)
						}
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
