package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// refKept is the set of tokens Sample may draw from in a row of logits,
// in float64: temperature, then top-k with ties kept, then the fewest
// largest tokens (equal logits together) whose mass reaches topP.
func refKept(x []float64, p Sampling, topP float64) []bool {
	v := make([]float64, len(x))
	for j, l := range x {
		v[j] = l
		if math.IsNaN(l) {
			v[j] = math.Inf(-1)
		}
	}
	desc := slices.Clone(v)
	slices.Sort(desc)
	slices.Reverse(desc)
	m, thr := desc[0], math.Inf(-1)
	if p.TopK > 0 && p.TopK < len(v) {
		thr = desc[p.TopK-1]
	}
	if topP > 0 && topP < 1 {
		w := func(l float64) float64 { return math.Exp((l - m) / float64(p.Temperature)) }
		z := 0.0
		for _, l := range desc {
			if l >= thr {
				z += w(l)
			}
		}
		cum := 0.0
		for k, l := range desc {
			if l < thr {
				break
			}
			cum += w(l)
			if (k+1 == len(desc) || desc[k+1] != l) && cum >= topP*z {
				thr = l
				break
			}
		}
	}
	kept := make([]bool, len(v))
	for j, l := range v {
		kept[j] = l >= thr
	}
	return kept
}

// refScores are the Gumbel-perturbed scores of a row in float64, from the
// same uniforms as the kernel's.
func refScores(x []float64, p Sampling, row int) []float64 {
	m := math.Inf(-1)
	for _, l := range x {
		if !math.IsNaN(l) {
			m = max(m, l)
		}
	}
	s := make([]float64, len(x))
	for j, l := range x {
		if math.IsNaN(l) {
			l = math.Inf(-1)
		}
		u := float64(uniform(p.Seed, row, j))
		s[j] = (l-m)/float64(p.Temperature) - math.Log(-math.Log(u))
	}
	return s
}

// bestOf is the argmax of scores over kept, ties to the lowest index.
func bestOf(scores []float64, kept []bool) int {
	best := -1
	for j, s := range scores {
		if kept[j] && (best < 0 || s > scores[best]) {
			best = j
		}
	}
	return best
}

func TestSample(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testSample[float32](t, dev) },
			func(t *testing.T) { testSample[gpu.Half](t, dev) },
			func(t *testing.T) { testSample[gpu.BFloat16](t, dev) })
	})
}

// testSample checks each row's token against the host's Gumbel-max pick
// from the same uniforms. A different token is accepted only when its
// score is within float32 rounding of the host's winner, or when the top-p
// boundary sits within 1e-5 of the target mass (float32 sums decide it).
func testSample[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(25, 26))
	params := []Sampling{
		{Temperature: 1, Seed: 1},
		{Temperature: 10, TopK: 3, Seed: 2}, // flat: top-k alone decides
		{Temperature: 1.3, TopP: 0.8, Seed: 3},
		{Temperature: 1, TopK: 50, TopP: 0.9, Seed: 4},
		{Temperature: 0.5, TopK: 1, Seed: 5},
		{Temperature: 2, TopP: 0.3, Seed: 6},
	}
	for k, c := range []struct{ rows, cols int }{{16, 40}, {5, 300}, {2, 3000}} {
		xv := randn(rng, c.rows*c.cols, 2)
		for j := 0; j < len(xv); j += 11 { // ties, masked and NaN logits
			xv[j] = []float64{2, math.Inf(-1), math.NaN()}[j%3]
		}
		x, xs := upload[T](t, dev, xv)
		for _, p := range params[2*k : 2*k+2] {
			out := alloc[int32](t, dev, c.rows)
			if err := Sample(dev, out, x, c.rows, c.cols, p); err != nil {
				t.Fatal(err)
			}
			got, err := out.Download()
			if err != nil {
				t.Fatal(err)
			}
			for r := range c.rows {
				row := xs[r*c.cols : (r+1)*c.cols]
				checkSample(t, fmt.Sprintf("%dx%d %+v row %d", c.rows, c.cols, p, r), row, p, r, int(got[r]))
			}
		}
	}
}

func checkSample(t *testing.T, name string, row []float64, p Sampling, r, got int) {
	t.Helper()
	topP := float64(p.TopP)
	kept := refKept(row, p, topP)
	scores := refScores(row, p, r)
	want := bestOf(scores, kept)
	if got == want {
		return
	}
	if got < 0 || got >= len(row) {
		t.Errorf("%s: token %d out of range", name, got)
		return
	}
	if kept[got] && math.Abs(scores[got]-scores[want]) < 1e-4 {
		return // a near tie
	}
	for _, p2 := range []float64{topP * (1 - 1e-5), topP * (1 + 1e-5)} {
		if bestOf(scores, refKept(row, p, p2)) == got {
			return // the top-p boundary within float32's reach
		}
	}
	t.Errorf("%s: token %d (logit %g, score %g, kept %v), want %d (logit %g, score %g)",
		name, got, row[got], scores[got], kept[got], want, row[want], scores[want])
}

// TestSampleDeterministic checks that a seed fixes the tokens and that
// another seed changes them.
func TestSampleDeterministic(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		const rows, cols = 16, 64
		x, _ := upload[float32](t, dev, randn(rand.New(rand.NewPCG(27, 28)), rows*cols, 1))
		draw := func(seed uint64) []int32 {
			out := alloc[int32](t, dev, rows)
			if err := Sample(dev, out, x, rows, cols, Sampling{Temperature: 1, TopP: 0.95, Seed: seed}); err != nil {
				t.Fatal(err)
			}
			got, err := out.Download()
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		a, b, c := draw(42), draw(42), draw(43)
		if !slices.Equal(a, b) {
			t.Errorf("seed 42 twice: %v and %v", a, b)
		}
		if slices.Equal(a, c) {
			t.Errorf("seeds 42 and 43 drew the same 16 tokens %v", a)
		}
	})
}

// TestSampleGreedy checks Temperature 0 against Argmax.
func TestSampleGreedy(t *testing.T) {
	dev := kern.OpenEmulator()
	xs := randn(rand.New(rand.NewPCG(29, 30)), 3*500, 1)
	x, xr := upload[gpu.BFloat16](t, dev, xs)
	out := alloc[int32](t, dev, 3)
	if err := Sample(dev, out, x, 3, 500, Sampling{TopK: 10, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	got, _ := out.Download()
	if want := refArgmax(xr, 3, 500); !slices.Equal(got, want) {
		t.Errorf("greedy: %v, want %v", got, want)
	}
}

// TestGumbelMaxDistribution checks, on the host, that the uniforms and the
// Gumbel-max pick draw from softmax(x/T) restricted to the kept set: a
// chi-square test of 40000 draws (rows) over the six tokens of one row.
func TestGumbelMaxDistribution(t *testing.T) {
	row := []float64{2, 1.5, 1, 0.5, 0, -1}
	p := Sampling{Temperature: 0.8, TopK: 5, TopP: 0.95, Seed: 7}
	kept := refKept(row, p, float64(p.TopP))
	prob, z := make([]float64, len(row)), 0.0
	for j, l := range row {
		if kept[j] {
			prob[j] = math.Exp(l / float64(p.Temperature))
			z += prob[j]
		}
	}
	const draws = 40000
	count := make([]int, len(row))
	for r := range draws {
		count[bestOf(refScores(row, p, r), kept)]++
	}
	chi2, df := 0.0, -1
	for j := range row {
		if prob[j] == 0 {
			if count[j] != 0 {
				t.Errorf("token %d drawn %d times outside the kept set", j, count[j])
			}
			continue
		}
		e := draws * prob[j] / z
		chi2 += (float64(count[j]) - e) * (float64(count[j]) - e) / e
		df++
	}
	// The 99.9% quantile of chi-square with 3 degrees of freedom is 16.27.
	if df != 3 || chi2 > 16.27 {
		t.Errorf("chi-square %.2f with %d degrees of freedom (counts %v, kept %v)", chi2, df, count, kept)
	}
}

func TestSampleShapeErrors(t *testing.T) {
	dev := kern.OpenNative()
	x, out := alloc[float32](t, dev, 12), alloc[int32](t, dev, 3)
	ok := Sampling{Temperature: 1}
	wantErr(t, "out", Sample(dev, out, x, 3, 3, ok), "ops.Sample", "logits has 12 elements, want rows×cols = 9")
	wantErr(t, "temp", Sample(dev, out, x, 3, 4, Sampling{Temperature: -1}), "ops.Sample", "Temperature = -1")
	wantErr(t, "nan", Sample(dev, out, x, 3, 4, Sampling{Temperature: float32(math.NaN())}), "ops.Sample", "Temperature")
	wantErr(t, "topk", Sample(dev, out, x, 3, 4, Sampling{Temperature: 1, TopK: -2}), "ops.Sample", "TopK = -2")
	wantErr(t, "topp", Sample(dev, out, x, 3, 4, Sampling{Temperature: 1, TopP: -0.5}), "ops.Sample", "TopP = -0.5")
	wantErr(t, "nil", Sample(dev, nil, x, 3, 4, ok), "ops.Sample", "out is nil")
}
