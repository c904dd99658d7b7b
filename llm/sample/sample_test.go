package sample

import (
	"math"
	"testing"
)

func logitsOf(ps ...float64) []float32 {
	out := make([]float32, len(ps))
	for i, p := range ps {
		out[i] = float32(math.Log(p))
	}
	return out
}

// draw returns the frequency of each token over n draws.
func draw(t *testing.T, p Params, logits []float32, n int) []float64 {
	t.Helper()
	s, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	f := make([]float64, len(logits))
	for i := 0; i < n; i++ {
		f[s.Next(logits, nil)] += 1 / float64(n)
	}
	return f
}

// checkFreq: each frequency within 5 standard deviations of want.
func checkFreq(t *testing.T, name string, got, want []float64, n int) {
	t.Helper()
	for i := range want {
		sd := math.Sqrt(want[i]*(1-want[i])/float64(n)) + 1e-12
		if math.Abs(got[i]-want[i]) > 5*sd+1e-9 {
			t.Errorf("%s: token %d frequency %.4f, want %.4f (±%.4f)", name, i, got[i], want[i], 5*sd)
		}
	}
}

func TestDistributions(t *testing.T) {
	l := logitsOf(0.5, 0.3, 0.15, 0.05)
	const n = 20000
	cases := []struct {
		name string
		p    Params
		want []float64
	}{
		{"temperature 1", Params{Temperature: 1, Seed: 1}, []float64{0.5, 0.3, 0.15, 0.05}},
		{"top-k 2", Params{Temperature: 1, TopK: 2, Seed: 2}, []float64{0.625, 0.375, 0, 0}},
		{"top-p 0.7", Params{Temperature: 1, TopP: 0.7, Seed: 3}, []float64{0.625, 0.375, 0, 0}},
		{"top-p 0.5", Params{Temperature: 1, TopP: 0.5, Seed: 4}, []float64{1, 0, 0, 0}},
		{"min-p 0.25", Params{Temperature: 1, MinP: 0.25, Seed: 5}, []float64{0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0}},
	}
	for _, c := range cases {
		checkFreq(t, c.name, draw(t, c.p, l, n), c.want, n)
	}
	// Temperature 2 flattens: p ∝ sqrt(p).
	sq := []float64{math.Sqrt(0.5), math.Sqrt(0.3), math.Sqrt(0.15), math.Sqrt(0.05)}
	z := sq[0] + sq[1] + sq[2] + sq[3]
	for i := range sq {
		sq[i] /= z
	}
	checkFreq(t, "temperature 2", draw(t, Params{Temperature: 2, Seed: 6}, l, n), sq, n)
}

func TestGreedyAndPenalty(t *testing.T) {
	s, _ := New(Params{})
	l := []float32{1, 3, float32(math.NaN()), 2.5}
	if got := s.Next(l, nil); got != 1 {
		t.Errorf("greedy = %d, want 1", got)
	}
	// Penalty 2 on token 1: 3 → 1.5 < 2.5.
	s, _ = New(Params{RepetitionPenalty: 2})
	if got := s.Next(l, []int32{1, 1}); got != 3 {
		t.Errorf("greedy with penalty = %d, want 3", got)
	}
	// A negative logit is multiplied (made less likely), not divided.
	s, _ = New(Params{RepetitionPenalty: 2})
	if got := s.Next([]float32{-1, -1.5}, []int32{0}); got != 1 {
		t.Errorf("negative logit penalty: %d, want 1", got)
	}
}

func TestSeeded(t *testing.T) {
	l := logitsOf(0.25, 0.25, 0.25, 0.25)
	run := func(seed uint64) []int32 {
		s, _ := New(Params{Temperature: 1, Seed: seed})
		var out []int32
		for i := 0; i < 64; i++ {
			out = append(out, s.Next(l, nil))
		}
		return out
	}
	a, b, c := run(7), run(7), run(8)
	same := func(x, y []int32) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("the same seed gave different tokens")
	}
	if same(a, c) {
		t.Error("different seeds gave the same 64 tokens")
	}
}

func TestValidate(t *testing.T) {
	for _, p := range []Params{{Temperature: -1}, {TopK: -1}, {TopP: 1.5}, {MinP: -0.1}, {RepetitionPenalty: math.NaN()}, {Temperature: math.Inf(1)}} {
		if _, err := New(p); err == nil {
			t.Errorf("New(%+v): no error", p)
		}
	}
}
