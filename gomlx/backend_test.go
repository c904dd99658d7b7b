package gomlx

// Registration, the not-implemented error, and the claim that buffers
// stay on the device between executions.

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/notimplemented"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func TestRegisteredByConfig(t *testing.T) {
	for _, cfg := range []string{"kern:emu", "kern:native"} {
		t.Setenv(backends.ConfigEnvVar, cfg)
		b, err := backends.New()
		if err != nil {
			t.Fatalf("%s=%s: %v", backends.ConfigEnvVar, cfg, err)
		}
		if b.Name() != "kern" || !strings.Contains(b.Description(), strings.TrimPrefix(cfg, "kern:")) {
			t.Errorf("%s=%s: backend %q (%s)", backends.ConfigEnvVar, cfg, b.Name(), b.Description())
		}
		b.Finalize()
	}
	if _, err := New("tpu"); err == nil {
		t.Errorf(`New("tpu") succeeded`)
	}
}

// TestUnimplementedOp: recording an op the backend lacks fails, naming
// the op and the backends that have it.
func TestUnimplementedOp(t *testing.T) {
	bl := backendFor(t, "emu").Builder("unimplemented")
	x, err := bl.Parameter("x", shapes.Make(dtypes.Float32, 4), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bl.Expm1(x)
	if err == nil || !errors.Is(err, notimplemented.NotImplementedError) ||
		!strings.Contains(err.Error(), "Expm1") || !strings.Contains(err.Error(), `"go" (simplego)`) {
		t.Errorf("Expm1: error %v, want one naming the op and simplego", err)
	}
	_, err = bl.FFT(x, backends.FFTForward, []int{4})
	if err == nil || !strings.Contains(err.Error(), "FFT") || strings.Contains(err.Error(), "simplego") {
		t.Errorf("FFT: error %v, want one naming the op and only xla", err)
	}
	// Through the graph package, the user's path: building fails with the
	// op's name before anything runs.
	e, err := graph.NewExec(backendFor(t, "emu"), func(x *graph.Node) *graph.Node { return graph.Expm1(x) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Exec([]float32{1, 2}); err == nil || !strings.Contains(err.Error(), "Expm1") {
		t.Errorf("graph.Expm1 on kern: error %v, want one naming Expm1", err)
	}
}

// TestSimplegoOps keeps simplegoOps equal to what simplego implements.
func TestSimplegoOps(t *testing.T) {
	for op, ok := range simplego.Capabilities.Operations {
		if ok && !slices.Contains(simplegoOps, op) {
			t.Errorf("simplego implements %s, missing from simplegoOps", op)
		}
	}
	for _, op := range simplegoOps {
		if !simplego.Capabilities.Operations[op] {
			t.Errorf("simplegoOps lists %s, which simplego does not implement", op)
		}
	}
}

// TestBuffersStayOnDevice: a chain of executions, each fed the previous
// one's output tensor, moves no data between host and device except the
// first input and the final read; graph constants and strides are
// uploaded once, when each graph is compiled.
func TestBuffersStayOnDevice(t *testing.T) {
	for _, d := range devices {
		t.Run(d, func(t *testing.T) {
			be, err := New(d)
			if err != nil {
				t.Fatal(err)
			}
			defer be.Finalize()
			kb := be.(*Backend)
			step, err := graph.NewExec(be, func(x *graph.Node) *graph.Node {
				// Transpose, matmul, broadcast, reduce and element-wise ops.
				y := graph.MatMul(x, graph.Transpose(x, 0, 1))
				y = graph.Add(y, graph.InsertAxes(graph.ReduceSum(x, 1), -1))
				return graph.Tanh(graph.MulScalar(y, 0.1))
			})
			if err != nil {
				t.Fatal(err)
			}
			host := [][]float32{{0.5, -1}, {2, 0.25}}
			x := tensors.FromValue(host)
			want := host
			const steps = 5
			var metaAfterFirst int64
			for i := range steps {
				out, err := step.Exec(x)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if i > 0 {
					x.FinalizeAll()
				}
				x = out[0]
				want = hostStep(want)
				if i == 0 {
					metaAfterFirst = kb.transfers.Meta.Load()
				}
			}
			tr := kb.TransferCounts()
			if up, down := tr.Uploads.Load(), tr.Downloads.Load(); up != 1 || down != 0 {
				t.Errorf("after %d chained executions: %d uploads, %d downloads; want 1 and 0", steps, up, down)
			}
			if m := tr.Meta.Load(); m != metaAfterFirst || m == 0 {
				t.Errorf("meta uploads: %d after the first execution, %d after all; want equal and non-zero", metaAfterFirst, m)
			}
			got := x.Value().([][]float32)
			if down := tr.Downloads.Load(); down != 1 {
				t.Errorf("reading the result: %d downloads, want 1", down)
			}
			checkClose(t, "chained result", dtypes.Float32, toFloat64(slices.Concat(got...)), toFloat64(slices.Concat(want...)), 1)
		})
	}
}

// hostStep is one step of the chain in TestBuffersStayOnDevice in float64.
func hostStep(x [][]float32) [][]float32 {
	out := make([][]float32, len(x))
	for i := range x {
		out[i] = make([]float32, len(x))
		var rs float64
		for _, v := range x[i] {
			rs += float64(v)
		}
		for j := range x {
			var dot float64
			for k := range x[i] {
				dot += float64(x[i][k]) * float64(x[j][k])
			}
			out[i][j] = float32(tanh(0.1 * (dot + rs)))
		}
	}
	return out
}

// TestSteadyState: a training loop that finalizes each step's old
// tensors allocates no device memory after its first steps: the pool
// (pool.go) hands the freed buffers back.
func TestSteadyState(t *testing.T) {
	be, err := New("emu")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	kb := be.(*Backend)
	step, err := graph.NewExec(be, sgdStep)
	if err != nil {
		t.Fatal(err)
	}
	defer step.Finalize()
	data := trainData()
	args := make([]any, len(data))
	for i, d := range data {
		args[i] = d
	}
	var prev []*tensors.Tensor
	var warm int64
	const steps = 8
	for s := range steps {
		out, err := step.Exec(args...)
		if err != nil {
			t.Fatalf("step %d: %v", s, err)
		}
		for _, p := range prev {
			p.FinalizeAll()
		}
		prev = out
		for i := range 4 {
			args[2+i] = out[5+i]
		}
		if s == 1 {
			warm = kb.TransferCounts().Allocs.Load()
		}
	}
	if n := kb.TransferCounts().Allocs.Load(); n != warm {
		t.Errorf("device allocations: %d after 2 steps, %d after %d: want none in between", warm, n, steps)
	}
	t.Logf("%d device allocations for %d training steps", warm, steps)
}
