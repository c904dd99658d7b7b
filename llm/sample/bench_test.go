package sample

import (
	"math/rand/v2"
	"testing"
)

// qwen3Logits is a row of Qwen3's vocabulary size, normally distributed.
func qwen3Logits() []float32 {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 151936)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 3)
	}
	return x
}

// BenchmarkNext times one draw at Qwen3's vocabulary: its generation
// config (temperature 0.6, top-k 20, top-p 0.95), top-p alone, and, for
// comparison, the full sort Next did before order.go.
func BenchmarkNext(b *testing.B) {
	x := qwen3Logits()
	for _, c := range []struct {
		name string
		p    Params
		full bool
	}{
		{"greedy", Params{}, false},
		{"qwen3-config", Params{Temperature: 0.6, TopK: 20, TopP: 0.95, Seed: 1}, false},
		{"top-p-0.9", Params{Temperature: 0.7, TopP: 0.9, Seed: 1}, false},
		{"qwen3-config-full-sort", Params{Temperature: 0.6, TopK: 20, TopP: 0.95, Seed: 1}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := New(c.p)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if c.full {
					s.nextFullSort(x, nil)
				} else {
					s.Next(x, nil)
				}
			}
		})
	}
}

// BenchmarkNextFrom times the same draws from the row's 64 largest
// logits (what ops.TopK hands the host on a GPU), greedy and with
// Qwen3's generation config.
func BenchmarkNextFrom(b *testing.B) {
	x := qwen3Logits()
	vals, ids := topCandidates(x, 64)
	for _, c := range []struct {
		name string
		p    Params
	}{
		{"greedy", Params{}},
		{"qwen3-config", Params{Temperature: 0.6, TopK: 20, TopP: 0.95, Seed: 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := New(c.p)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, ok := s.NextFrom(vals, ids, nil); !ok {
					b.Fatal("declined")
				}
			}
		})
	}
}
