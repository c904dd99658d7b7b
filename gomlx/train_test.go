package gomlx

// Training through GoMLX's autodiff: a 2-layer MLP (tanh, then ReLU)
// regresses a smooth function by plain SGD written as one graph (loss,
// gradients and updated weights per step). The same steps run on
// simplego and on kern; the losses must match step by step, the
// gradients of the first step must match, and the loss must fall.

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

const (
	trainN, trainIn, trainHidden = 32, 3, 8
	trainSteps                   = 40
	learningRate                 = 0.1
)

// sgdStep: inputs x [N, In], y [N, 1], w1 [In, H], b1 [H], w2 [H, 1],
// b2 [1]; outputs loss, the four gradients, then the four updated
// weights.
func sgdStep(in []*graph.Node) []*graph.Node {
	x, y, w := in[0], in[1], in[2:]
	h := graph.Tanh(graph.Add(graph.MatMul(x, w[0]), graph.InsertAxes(w[1], 0)))
	h = graph.Max(h, graph.ScalarZero(h.Graph(), dtypes.Float32)) // ReLU after tanh: a Where in the gradient
	pred := graph.Add(graph.MatMul(h, w[2]), graph.InsertAxes(w[3], 0))
	loss := graph.ReduceAllMean(graph.Square(graph.Sub(pred, y)))
	grads := graph.Gradient(loss, w...)
	out := append([]*graph.Node{loss}, grads...)
	for i, g := range grads {
		out = append(out, graph.Sub(w[i], graph.MulScalar(g, learningRate)))
	}
	return out
}

// trainData draws the inputs and the initial weights, seeded.
func trainData() []*tensors.Tensor {
	r := rand.New(rand.NewPCG(7, 13))
	norm := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * s)
		}
		return v
	}
	x := norm(trainN*trainIn, 1)
	y := make([]float32, trainN)
	for i := range y {
		a, b, c := float64(x[i*trainIn]), float64(x[i*trainIn+1]), float64(x[i*trainIn+2])
		y[i] = float32(math.Sin(a) + 0.5*b*c)
	}
	return []*tensors.Tensor{
		tensors.FromFlatDataAndDimensions(x, trainN, trainIn),
		tensors.FromFlatDataAndDimensions(y, trainN, 1),
		tensors.FromFlatDataAndDimensions(norm(trainIn*trainHidden, 0.7), trainIn, trainHidden),
		tensors.FromFlatDataAndDimensions(norm(trainHidden, 0.1), trainHidden),
		tensors.FromFlatDataAndDimensions(norm(trainHidden, 0.5), trainHidden, 1),
		tensors.FromFlatDataAndDimensions(norm(1, 0.1), 1),
	}
}

// trainMLP runs trainSteps SGD steps on be; it returns the loss of each
// step and the first step's gradients (flattened).
func trainMLP(t *testing.T, be backends.Backend) (losses []float64, grads [][]float64) {
	t.Helper()
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
	for s := range trainSteps {
		out, err := step.Exec(args...)
		if err != nil {
			t.Fatalf("step %d on %s: %v", s, be.Name(), err)
		}
		losses = append(losses, float64(out[0].Value().(float32)))
		if s == 0 {
			for _, g := range out[1:5] {
				grads = append(grads, toFloat64(tensors.MustCopyFlatData[float32](g)))
			}
		}
		for i := range 4 {
			args[2+i] = out[5+i]
		}
	}
	return losses, grads
}

func TestTrainMLP(t *testing.T) {
	wantLoss, wantGrads := trainMLP(t, backendFor(t, "go"))
	gotLoss, gotGrads := trainMLP(t, backendFor(t, "emu"))
	for i := range wantGrads {
		// Each gradient sums N terms: float32 tolerance scaled by N.
		checkClose(t, "first-step gradient "+[]string{"w1", "b1", "w2", "b2"}[i], dtypes.Float32, gotGrads[i], wantGrads[i], trainN)
	}
	// Forty steps compound rounding differences; the losses must still
	// agree to 1e-4 relative.
	for s := range gotLoss {
		if d := math.Abs(gotLoss[s] - wantLoss[s]); d > 1e-4*math.Abs(wantLoss[s])+1e-6 {
			t.Errorf("step %d: loss %.7g on kern (emu), %.7g on simplego", s, gotLoss[s], wantLoss[s])
		}
	}
	first, last := gotLoss[0], gotLoss[len(gotLoss)-1]
	t.Logf("loss on kern (emu): %.4f → %.4f over %d steps (simplego: %.4f → %.4f)", first, last, trainSteps, wantLoss[0], wantLoss[len(wantLoss)-1])
	if !(last < 0.5*first) {
		t.Errorf("loss went from %.4f to %.4f: want it at least halved", first, last)
	}
}

// TestTrainEmbedding: an embedding table trained through Gather, whose
// gradient is ScatterSum (repeated tokens add up). Loss and first-step
// gradients against simplego, as TestTrainMLP.
func TestTrainEmbedding(t *testing.T) {
	const vocab, dim, n, steps = 10, 4, 24, 30
	r := rand.New(rand.NewPCG(3, 5))
	tokens := make([]int32, n)
	y := make([]float32, n)
	for i := range tokens {
		tokens[i] = int32(r.IntN(vocab))
		y[i] = float32(math.Cos(float64(tokens[i]))) // a value per token to learn
	}
	table := make([]float32, vocab*dim)
	w := make([]float32, dim)
	for i := range table {
		table[i] = float32(r.NormFloat64() * 0.5)
	}
	for i := range w {
		w[i] = float32(r.NormFloat64() * 0.5)
	}
	stepFn := func(in []*graph.Node) []*graph.Node {
		tok, y, table, w := in[0], in[1], in[2], in[3]
		e := graph.Gather(table, graph.InsertAxes(tok, -1)) // [n, dim]
		pred := graph.MatMul(e, w)                          // [n, 1]
		loss := graph.ReduceAllMean(graph.Square(graph.Sub(pred, y)))
		g := graph.Gradient(loss, table, w)
		return []*graph.Node{loss, g[0], g[1], graph.Sub(table, graph.MulScalar(g[0], 0.5)), graph.Sub(w, graph.MulScalar(g[1], 0.5))}
	}
	run := func(be backends.Backend) (losses []float64, grads [][]float64) {
		e, err := graph.NewExec(be, stepFn)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Finalize()
		args := []any{
			tensors.FromFlatDataAndDimensions(tokens, n), tensors.FromFlatDataAndDimensions(y, n, 1),
			tensors.FromFlatDataAndDimensions(table, vocab, dim), tensors.FromFlatDataAndDimensions(w, dim, 1),
		}
		for s := range steps {
			out, err := e.Exec(args...)
			if err != nil {
				t.Fatalf("step %d on %s: %v", s, be.Name(), err)
			}
			losses = append(losses, float64(out[0].Value().(float32)))
			if s == 0 {
				grads = [][]float64{toFloat64(tensors.MustCopyFlatData[float32](out[1])), toFloat64(tensors.MustCopyFlatData[float32](out[2]))}
			}
			args[2], args[3] = out[3], out[4]
		}
		return losses, grads
	}
	wantLoss, wantGrads := run(backendFor(t, "go"))
	gotLoss, gotGrads := run(backendFor(t, "emu"))
	checkClose(t, "first-step table gradient", dtypes.Float32, gotGrads[0], wantGrads[0], n)
	checkClose(t, "first-step w gradient", dtypes.Float32, gotGrads[1], wantGrads[1], n)
	for s := range gotLoss {
		if d := math.Abs(gotLoss[s] - wantLoss[s]); d > 1e-4*math.Abs(wantLoss[s])+1e-6 {
			t.Errorf("step %d: loss %.7g on kern (emu), %.7g on simplego", s, gotLoss[s], wantLoss[s])
		}
	}
	first, last := gotLoss[0], gotLoss[len(gotLoss)-1]
	t.Logf("embedding loss on kern (emu): %.4f → %.4f over %d steps (simplego: %.4f → %.4f)", first, last, steps, wantLoss[0], wantLoss[len(wantLoss)-1])
	if !(last < 0.5*first) {
		t.Errorf("loss went from %.4f to %.4f: want it at least halved", first, last)
	}
}

// TestTrainSoftmaxClassifier: a linear classifier trained on a
// cross-entropy written with graph.Softmax, which the backend fuses into
// ops.Softmax while autodiff still reads the pattern's intermediates.
func TestTrainSoftmaxClassifier(t *testing.T) {
	const n, in, classes, steps = 30, 4, 3, 30
	r := rand.New(rand.NewPCG(19, 23))
	x := make([]float32, n*in)
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(r.IntN(classes))
		for j := range in {
			x[i*in+j] = float32(r.NormFloat64()*0.5) + float32(labels[i]*int32(j%2))
		}
	}
	w := make([]float32, in*classes)
	for i := range w {
		w[i] = float32(r.NormFloat64() * 0.1)
	}
	stepFn := func(x, labels, w *graph.Node) (*graph.Node, *graph.Node, *graph.Node) {
		p := graph.Softmax(graph.MatMul(x, w))
		onehot := graph.OneHot(labels, classes, dtypes.Float32)
		loss := graph.Neg(graph.ReduceAllMean(graph.ReduceSum(graph.Mul(onehot, graph.Log(p)), -1)))
		g := graph.Gradient(loss, w)[0]
		return loss, g, graph.Sub(w, graph.MulScalar(g, 0.5))
	}
	run := func(be backends.Backend) (losses []float64, grad []float64) {
		e, err := graph.NewExec(be, stepFn)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Finalize()
		wt := tensors.FromFlatDataAndDimensions(w, in, classes)
		xs, ls := tensors.FromFlatDataAndDimensions(x, n, in), tensors.FromFlatDataAndDimensions(labels, n)
		for s := range steps {
			out, err := e.Exec(xs, ls, wt)
			if err != nil {
				t.Fatalf("step %d on %s: %v", s, be.Name(), err)
			}
			losses = append(losses, float64(out[0].Value().(float32)))
			if s == 0 {
				grad = toFloat64(tensors.MustCopyFlatData[float32](out[1]))
			}
			wt = out[2]
		}
		return losses, grad
	}
	wantLoss, wantGrad := run(backendFor(t, "go"))
	kb := backendFor(t, "emu").(*Backend)
	before := kb.Fusions()["softmax"]
	gotLoss, gotGrad := run(kb)
	if kb.Fusions()["softmax"] == before {
		t.Errorf("the softmax was not fused")
	}
	checkClose(t, "first-step gradient", dtypes.Float32, gotGrad, wantGrad, n)
	for s := range gotLoss {
		if d := math.Abs(gotLoss[s] - wantLoss[s]); d > 1e-4*math.Abs(wantLoss[s])+1e-6 {
			t.Errorf("step %d: loss %.7g on kern (emu), %.7g on simplego", s, gotLoss[s], wantLoss[s])
		}
	}
	t.Logf("softmax classifier on kern (emu): loss %.4f → %.4f over %d steps (simplego %.4f → %.4f)", gotLoss[0], gotLoss[steps-1], steps, wantLoss[0], wantLoss[steps-1])
	if !(gotLoss[steps-1] < 0.7*gotLoss[0]) {
		t.Errorf("loss went from %.4f to %.4f: want it to fall by 30%%", gotLoss[0], gotLoss[steps-1])
	}
}
