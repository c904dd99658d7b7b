package gomlx

// GoMLX's own training stack on kern: a context-variable model trained by
// train.Trainer with the Adam optimizer and the mean-squared-error loss,
// on simplego and on kern's emulator from the same (seeded) weights.

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// trainerRun trains for steps on be and returns the loss after each.
func trainerRun(t *testing.T, be backends.Backend, steps int) []float64 {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 17))
	weights := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * s)
		}
		return v
	}
	const n, in, hidden = 32, 2, 6
	x := weights(n*in, 1)
	y := make([]float32, n)
	for i := range y {
		y[i] = float32(math.Tanh(float64(x[2*i]) - 0.5*float64(x[2*i+1])))
	}
	w1 := tensors.FromFlatDataAndDimensions(weights(in*hidden, 0.7), in, hidden)
	b1 := tensors.FromFlatDataAndDimensions(weights(hidden, 0.1), hidden)
	w2 := tensors.FromFlatDataAndDimensions(weights(hidden, 0.5), hidden, 1)
	ctx := context.New()
	model := func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		h := graph.MatMul(inputs[0], ctx.VariableWithValue("w1", w1).ValueGraph(inputs[0].Graph()))
		h = graph.Tanh(graph.Add(h, graph.InsertAxes(ctx.VariableWithValue("b1", b1).ValueGraph(h.Graph()), 0)))
		return []*graph.Node{graph.MatMul(h, ctx.VariableWithValue("w2", w2).ValueGraph(h.Graph()))}
	}
	trainer := train.NewTrainer(be, ctx, model, losses.MeanSquaredError, optimizers.Adam().LearningRate(0.05).Done(), nil, nil)
	xs, ys := tensors.FromFlatDataAndDimensions(x, n, in), tensors.FromFlatDataAndDimensions(y, n, 1)
	var out []float64
	for s := range steps {
		metrics, err := trainer.TrainStep(nil, []*tensors.Tensor{xs}, []*tensors.Tensor{ys})
		if err != nil {
			t.Fatalf("step %d on %s: %v", s, be.Name(), err)
		}
		out = append(out, float64(metrics[0].Value().(float32)))
	}
	return out
}

func TestTrainerAdam(t *testing.T) {
	const steps = 25
	want := trainerRun(t, backendFor(t, "go"), steps)
	got := trainerRun(t, backendFor(t, "emu"), steps)
	for s := range got {
		if d := math.Abs(got[s] - want[s]); d > 1e-4*math.Abs(want[s])+1e-6 {
			t.Errorf("step %d: loss %.7g on kern (emu), %.7g on simplego", s, got[s], want[s])
		}
	}
	t.Logf("train.Trainer + Adam on kern (emu): loss %.4f → %.4f over %d steps (simplego %.4f → %.4f)", got[0], got[steps-1], steps, want[0], want[steps-1])
	if !(got[steps-1] < 0.5*got[0]) {
		t.Errorf("loss went from %.4f to %.4f: want it at least halved", got[0], got[steps-1])
	}
}
