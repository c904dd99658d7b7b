package sample

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// topCandidates is ops.TopK on the host: the first c ids of the row in
// Next's order (larger first, ties to the lower id, NaN as -Inf).
func topCandidates(row []float32, c int) ([]float32, []int32) {
	key := func(j int32) float64 {
		if v := float64(row[j]); !math.IsNaN(v) {
			return v
		}
		return math.Inf(-1)
	}
	idx := make([]int32, len(row))
	for j := range idx {
		idx[j] = int32(j)
	}
	sort.SliceStable(idx, func(a, b int) bool { return key(idx[a]) > key(idx[b]) })
	idx = idx[:c]
	vals := make([]float32, c)
	for i, j := range idx {
		vals[i] = float32(key(j))
	}
	return vals, idx
}

// TestNextFromIsNext: over random rows (ties, -Inf, NaN, magnitudes
// from 1e-3 to 1e3) and histories, a sampler drawing from 64 candidates
// (and from the whole row where NextFrom declines) gives the tokens of
// one drawing from whole rows, step after step, so its random stream is
// the same; and the candidates decide greedy and top-k draws as the
// header says.
func TestNextFromIsNext(t *testing.T) {
	const V, C, steps = 3000, 64, 40
	const all, some, none = 0, 1, 2 // the steps drawn from the candidates
	for _, c := range []struct {
		name string
		p    Params
		from int
	}{
		{"greedy", Params{}, all},
		{"greedy, penalty 1.3", Params{RepetitionPenalty: 1.3}, all},
		{"Qwen3's config", Params{Temperature: 0.6, TopK: 20, TopP: 0.95, Seed: 1}, all},
		{"top-k 56, min-p 0.05, penalty 1.2", Params{Temperature: 1.1, TopK: 56, MinP: 0.05, RepetitionPenalty: 1.2, Seed: 2}, some},
		{"top-k 63", Params{Temperature: 0.8, TopK: 63, Seed: 3}, all},
		{"top-k 64", Params{Temperature: 0.8, TopK: 64, Seed: 4}, none},
		{"top-p alone", Params{Temperature: 0.7, TopP: 0.9, Seed: 5}, none},
		{"penalty 0.8", Params{Temperature: 0.7, TopK: 10, RepetitionPenalty: 0.8, Seed: 6}, none},
	} {
		rng := rand.New(rand.NewPCG(uint64(len(c.name)), 9))
		a, _ := New(c.p)
		b, _ := New(c.p)
		var seen []int32
		from := 0
		for step := range steps {
			row := make([]float32, V)
			scale := math.Pow(10, float64(rng.IntN(7)-3))
			for j := range row {
				row[j] = float32(rng.NormFloat64() * scale)
				if step%3 == 0 {
					row[j] = float32(rng.IntN(6)) // ties everywhere
				}
			}
			row[rng.IntN(V)] = float32(math.Inf(-1))
			row[rng.IntN(V)] = float32(math.NaN())
			vals, ids := topCandidates(row, C)
			if step%5 == 4 {
				seen = append(seen, ids[:8]...) // the favourites already said
			}
			got, ok := a.NextFrom(vals, ids, seen)
			if ok {
				from++
			} else {
				got = a.Next(row, seen)
			}
			if want := b.Next(row, seen); got != want {
				t.Fatalf("%s, step %d: %d (from the candidates: %v), want %d", c.name, step, got, ok, want)
			}
			seen = append(seen, got)
		}
		if c.from == all && from != steps || c.from == none && from != 0 || c.from == some && (from == 0 || from == steps) {
			t.Errorf("%s: %d of %d steps drawn from the candidates, want %s", c.name, from, steps, [...]string{"all", "some", "none"}[c.from])
		}
	}
}

func TestNextFromDeclines(t *testing.T) {
	s, _ := New(Params{Temperature: 1, TopK: 2, Seed: 1})
	if _, ok := s.NextFrom(nil, nil, nil); ok {
		t.Error("no candidates: decided")
	}
	if _, ok := s.NextFrom([]float32{1, 0}, []int32{3}, nil); ok {
		t.Error("ids and values of different lengths: decided")
	}
	inf := float32(math.Inf(-1))
	if _, ok := s.NextFrom([]float32{2, 1, inf, inf}, []int32{0, 1, 2, 3}, nil); ok {
		t.Error("top-k 2 of a row with two finite logits (Next keeps them unfiltered): decided")
	}
	g, _ := New(Params{})
	p, _ := New(Params{RepetitionPenalty: 1.1})
	if !g.Greedy() || p.Greedy() || s.Greedy() {
		t.Errorf("Greedy: %v, with a penalty %v, top-k sampling %v; want true, false, false", g.Greedy(), p.Greedy(), s.Greedy())
	}
	if _, ok := g.NextFrom([]float32{inf, inf}, []int32{0, 1}, nil); ok {
		t.Error("greedy over -Inf candidates (the row's argmax may lie outside): decided")
	}
}
