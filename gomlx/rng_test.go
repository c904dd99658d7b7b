package gomlx

// RNGBitGenerator against a host SplitMix64, bit for bit; the state's
// counter; and GoMLX's layers.Dense, whose random initializer draws from
// it, training on kern.

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// hostSplitMix is SplitMix64 at position pos of seed key: the state
// advances by the golden-ratio constant, then the 30/27/31 finalizer.
func hostSplitMix(key, pos uint64) uint64 {
	z := key + (pos+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// rngCase draws uint32 bits from a random state for TestOps (and
// TestOpCoverage), against the host generator; the number of bits drawn
// follows from the state's counter, so the reference can know it.
// TestRNGBitGenerator checks uint64 bits and the new state.
func rngCase() opCase {
	count := func(st []uint64) int { return 1 + int(st[1]%300) }
	return opCase{name: "RNGBitGenerator", ops: opList(backends.OpTypeRNGBitGenerator), dtypes: []dtypes.DType{dtypes.Uint32},
		gen: func(r *rand.Rand, dt dtypes.DType) ([]input, graphFn) {
			st := []uint64{r.Uint64(), uint64(r.IntN(1000)), 0}
			return []input{{shape: backends.RNGStateShape, flat: st}}, func(b B, p []O) (O, error) {
				_, v, err := b.RNGBitGenerator(p[0], shapes.Make(dtypes.Uint32, count(st)))
				return v, err
			}
		},
		host: func(ins []input) ([]float64, []int) {
			st := ins[0].flat.([]uint64)
			out := make([]float64, count(st))
			for i := range out {
				out[i] = float64(uint32(hostSplitMix(st[0], st[1]+uint64(i)) >> 32))
			}
			return out, []int{len(out)}
		}}
}

func TestRNGBitGenerator(t *testing.T) {
	for _, d := range devices {
		be := backendFor(t, d)
		state := []uint64{0x1234_5678_9abc_def0, 77, 5}
		const n = 4096
		bl := be.Builder("rng")
		s, _ := bl.Parameter("state", backends.RNGStateShape, nil)
		next, bits64, err := bl.RNGBitGenerator(s, shapes.Make(dtypes.Uint64, n))
		if err != nil {
			t.Fatal(err)
		}
		_, bits32, err := bl.RNGBitGenerator(next, shapes.Make(dtypes.Uint32, n))
		if err != nil {
			t.Fatal(err)
		}
		exe, err := bl.Compile([]backends.Op{next, bits64, bits32}, nil)
		if err != nil {
			t.Fatal(err)
		}
		in, err := be.BufferFromFlatData(0, state, backends.RNGStateShape)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exe.Execute([]backends.Buffer{in}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		gotNext, got64, got32 := make([]uint64, 3), make([]uint64, n), make([]uint32, n)
		for i, dst := range []any{gotNext, got64, got32} {
			if err := be.BufferToFlatData(out[i], dst); err != nil {
				t.Fatal(err)
			}
		}
		if gotNext[0] != state[0] || gotNext[1] != state[1]+n || gotNext[2] != state[2] {
			t.Errorf("%s: new state %v, want %v with the counter advanced by %d", d, gotNext, state, n)
		}
		var mean float64
		buckets := make([]int, 16)
		for i := range n {
			if want := hostSplitMix(state[0], state[1]+uint64(i)); got64[i] != want {
				t.Fatalf("%s: uint64 bits[%d] = %#x, want %#x", d, i, got64[i], want)
			}
			if want := uint32(hostSplitMix(state[0], state[1]+n+uint64(i)) >> 32); got32[i] != want {
				t.Fatalf("%s: uint32 bits[%d] (second draw) = %#x, want %#x", d, i, got32[i], want)
			}
			u := float64(got32[i]) / (1 << 32)
			mean += u / n
			buckets[got32[i]>>28]++
		}
		// Uniform on [0, 1): the mean's σ is 1/√(12n) ≈ 0.0045, a bucket
		// count's σ is √(n/16·15/16) ≈ 15.5; allow 5σ.
		if math.Abs(mean-0.5) > 5/math.Sqrt(12*n) {
			t.Errorf("%s: mean of uint32 bits / 2³² = %.4f, want 0.5", d, mean)
		}
		for b, c := range buckets {
			if math.Abs(float64(c)-n/16) > 5*math.Sqrt(n/16*15.0/16) {
				t.Errorf("%s: top-nibble bucket %d holds %d of %d", d, b, c, n)
			}
		}
	}
}

// TestTrainDenseRandomInit: GoMLX's layers.Dense, whose weights its
// random initializer draws through RNGBitGenerator on the backend, trains
// with train.Trainer and Adam on kern (emu).
func TestTrainDenseRandomInit(t *testing.T) {
	be := backendFor(t, "emu")
	ctx := context.New()
	if err := ctx.SetRNGStateFromSeed(42); err != nil {
		t.Fatal(err)
	}
	model := func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		h := graph.Tanh(layers.Dense(ctx.In("hidden"), inputs[0], true, 8))
		return []*graph.Node{layers.Dense(ctx.In("out"), h, true, 1)}
	}
	trainer := train.NewTrainer(be, ctx, model, losses.MeanSquaredError, optimizers.Adam().LearningRate(0.05).Done(), nil, nil)
	r := rand.New(rand.NewPCG(5, 8))
	const n = 32
	x, y := make([]float32, 2*n), make([]float32, n)
	for i := range n {
		x[2*i], x[2*i+1] = float32(r.NormFloat64()), float32(r.NormFloat64())
		y[i] = float32(math.Sin(float64(x[2*i])) * float64(x[2*i+1]))
	}
	xs, ys := tensors.FromFlatDataAndDimensions(x, n, 2), tensors.FromFlatDataAndDimensions(y, n, 1)
	var first, last float64
	const steps = 30
	for s := range steps {
		m, err := trainer.TrainStep(nil, []*tensors.Tensor{xs}, []*tensors.Tensor{ys})
		if err != nil {
			t.Fatalf("step %d: %v", s, err)
		}
		loss := float64(m[0].Value().(float32))
		if s == 0 {
			first = loss
		}
		last = loss
	}
	t.Logf("layers.Dense with random init on kern (emu): loss %.4f → %.4f over %d steps", first, last, steps)
	if !(last < 0.5*first) {
		t.Errorf("loss went from %.4f to %.4f: want it at least halved", first, last)
	}
}
