package sample

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// nextFullSort is Next as it was before order.go: every filter sorted the
// whole vocabulary. The reference for TestOrderMatchesFullSort.
func (s *Sampler) nextFullSort(logits []float32, seen []int32) int32 {
	x := s.buf[:0]
	for _, v := range logits {
		f := float64(v)
		if math.IsNaN(f) {
			f = math.Inf(-1)
		}
		x = append(x, f)
	}
	s.buf = x
	if r := s.p.RepetitionPenalty; r > 0 && r != 1 {
		done := map[int32]bool{}
		for _, id := range seen {
			if id < 0 || int(id) >= len(x) || done[id] {
				continue
			}
			done[id] = true
			if x[id] > 0 {
				x[id] /= r
			} else {
				x[id] *= r
			}
		}
	}
	if s.p.Temperature == 0 {
		return argmax(x)
	}
	for i := range x {
		x[i] /= s.p.Temperature
	}
	// Candidates in descending logit order (ties: lower id first) when a
	// filter needs the order; else every finite-logit token.
	idx := s.idx[:0]
	for i, v := range x {
		if !math.IsInf(v, -1) {
			idx = append(idx, int32(i))
		}
	}
	if len(idx) == 0 {
		return argmax(x)
	}
	k := s.p.TopK
	if k > 0 && k < len(idx) || s.p.TopP > 0 && s.p.TopP < 1 {
		sort.Slice(idx, func(a, b int) bool {
			va, vb := x[idx[a]], x[idx[b]]
			return va > vb || va == vb && idx[a] < idx[b]
		})
		if k > 0 && k < len(idx) {
			idx = idx[:k]
		}
	}
	m := math.Inf(-1)
	for _, i := range idx {
		m = math.Max(m, x[i])
	}
	z := 0.0
	for _, i := range idx {
		x[i] = math.Exp(x[i] - m)
		z += x[i]
	}
	if tp := s.p.TopP; tp > 0 && tp < 1 {
		// idx is sorted: keep the shortest prefix with mass ≥ tp.
		acc, n := 0.0, 0
		for n < len(idx) {
			acc += x[idx[n]] / z
			n++
			if acc >= tp {
				break
			}
		}
		idx = idx[:n]
		z = acc * z
	}
	if mp := s.p.MinP; mp > 0 {
		// The most likely candidate has weight exp(0) = 1 (before top-p
		// only if it was kept, which it always is).
		kept := idx[:0]
		z = 0
		for _, i := range idx {
			if x[i] >= mp {
				kept = append(kept, i)
				z += x[i]
			}
		}
		idx = kept
	}
	s.idx = idx
	u := s.rng.Float64() * z
	for _, i := range idx {
		u -= x[i]
		if u < 0 {
			return i
		}
	}
	return idx[len(idx)-1] // rounding left u ≥ 0 at the end
}

// TestOrderMatchesFullSort: Next, which orders only the candidates a
// filter needs, draws the same tokens as a full sort of the vocabulary,
// over random logits with many ties, every filter alone and together, a
// repetition penalty, and vocabularies from 3 to 20000.
func TestOrderMatchesFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	trials := 0
	for _, v := range []int{3, 50, 1000, 20000} {
		for _, k := range []int{0, 1, 7, 64} {
			for _, tp := range []float64{0, 0.3, 0.9, 0.999999} {
				for _, mp := range []float64{0, 0.05} {
					for trial := range 3 {
						x := make([]float32, v)
						ties := trial == 1 // logits on a coarse grid: many equal values
						for i := range x {
							f := rng.NormFloat64() * 4
							if ties {
								f = math.Round(f)
							}
							x[i] = float32(f)
						}
						if trial == 2 && v > 10 {
							x[3] = float32(math.NaN())
							x[4] = float32(math.Inf(-1))
						}
						p := Params{Temperature: 0.3 + 0.7*rng.Float64(), TopK: k, TopP: tp, MinP: mp, RepetitionPenalty: 1.3, Seed: rng.Uint64()}
						a, _ := New(p)
						b, _ := New(p)
						seen := []int32{0, 2, int32(v - 1)}
						for step := range 4 {
							got, want := a.Next(x, seen), b.nextFullSort(x, seen)
							if got != want {
								t.Fatalf("vocab %d, %+v, step %d: token %d, full sort %d", v, p, step, got, want)
							}
							seen = append(seen, got)
							trials++
						}
					}
				}
			}
		}
	}
	t.Logf("%d draws identical", trials)
}
