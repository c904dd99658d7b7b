package tp

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/qwen3"
)

// relTol is the acceptance tolerance: TP=T's logits against TP=1's,
// max|a−b| over max|b| per row. The shards compute the same float32 sums
// split in T pieces and added in another order, so they differ by
// rounding only (~1e-6 here); a wrong slice is off by O(1).
const relTol = 1e-3

// TestTPMatchesOneRank runs every tiny model at TP=2 and TP=4 on emu
// devices (one per rank) and at TP=1 on another: a prompt's logits (all
// rows), then greedy decode steps whose tokens must agree and whose
// logits must be within relTol. All three tiny models have 4 heads and
// 2 KV heads: TP=2 splits both, TP=4 gives each rank one query head and
// replicates each KV head on two ranks.
func TestTPMatchesOneRank(t *testing.T) {
	prompt := []int32{3, 141, 59, 265, 358, 979, 32, 38}
	const steps = 6
	for _, variant := range fixture.Variants {
		dir := fixture.Model(t, variant)
		one, err := qwen3.Load(kern.OpenEmulator(), dir, qwen3.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantPrompt, wantSteps, wantTokens := run(t, func(c int) (forwarder, func(), error) {
			cache, err := one.NewCache(c)
			return func(tokens []int32, all bool) (*kern.Buffer[float32], error) { return one.Forward(cache, tokens, all) },
				cache.Free, err
		}, prompt, steps)
		one.Free()
		for _, T := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/TP=%d", variant, T), func(t *testing.T) {
				devs := make([]*kern.Device, T)
				for i := range devs {
					devs[i] = kern.OpenEmulator()
				}
				m, err := LoadLocal(devs, dir)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Free()
				if h := m.Shards[T-1].Config.NumAttentionHeads; h != 4/T {
					t.Fatalf("rank %d has %d heads, want %d", T-1, h, 4/T)
				}
				gotPrompt, gotSteps, gotTokens := run(t, func(c int) (forwarder, func(), error) {
					cache, err := m.NewCache(c)
					return func(tokens []int32, all bool) (*kern.Buffer[float32], error) { return m.Forward(cache, tokens, all) },
						cache.Free, err
				}, prompt, steps)
				V := m.Config.VocabSize
				worst := 0.0
				for i := range prompt {
					worst = max(worst, checkRow(t, fmt.Sprintf("prompt row %d", i), gotPrompt[i*V:(i+1)*V], wantPrompt[i*V:(i+1)*V]))
				}
				for s := range steps {
					worst = max(worst, checkRow(t, fmt.Sprintf("decode step %d", s), gotSteps[s], wantSteps[s]))
				}
				t.Logf("largest relative logit difference from TP=1: %.2g", worst)
				if fmt.Sprint(gotTokens) != fmt.Sprint(wantTokens) {
					t.Errorf("greedy tokens at TP=%d: %v, at TP=1: %v", T, gotTokens, wantTokens)
				}
			})
		}
	}
}

type forwarder func(tokens []int32, all bool) (*kern.Buffer[float32], error)

// run prefills a fresh cache with prompt (every row's logits) and decodes
// steps greedy tokens, returning the prompt's logits, each step's, and
// the tokens.
func run(t *testing.T, newCache func(capacity int) (forwarder, func(), error), prompt []int32, steps int) ([]float32, [][]float32, []int32) {
	t.Helper()
	fwd, free, err := newCache(len(prompt) + steps + 1)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	b, err := fwd(prompt, true)
	if err != nil {
		t.Fatal(err)
	}
	all, err := b.Download()
	if err != nil {
		t.Fatal(err)
	}
	V := len(all) / len(prompt)
	next := argmax(all[len(all)-V:])
	var logits [][]float32
	var tokens []int32
	for range steps {
		tokens = append(tokens, next)
		b, err := fwd([]int32{next}, false)
		if err != nil {
			t.Fatal(err)
		}
		row, err := b.Download()
		if err != nil {
			t.Fatal(err)
		}
		logits = append(logits, row)
		next = argmax(row)
	}
	return all, logits, tokens
}

func argmax(xs []float32) int32 {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return int32(best)
}

func checkRow(t *testing.T, what string, got, want []float32) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d logits, want %d", what, len(got), len(want))
	}
	var diff, scale float64
	for i := range got {
		diff = max(diff, math.Abs(float64(got[i]-want[i])))
		scale = max(scale, math.Abs(float64(want[i])))
	}
	if diff > relTol*scale || math.IsNaN(diff) {
		t.Errorf("%s: max |Δ| = %.3g, %.3g of max |logit| %.3g (tolerance %g)", what, diff, diff/scale, scale, relTol)
	}
	return diff / scale
}

// TestTPRefusesWhatDoesNotDivide: the tiny models' 4 heads, 2 KV heads,
// intermediate 128 and vocabulary 1000 allow TP 1, 2 and 4; TP=3 and
// TP=8 fail before anything is loaded, naming each field at fault.
func TestTPRefusesWhatDoesNotDivide(t *testing.T) {
	dir := fixture.Model(t, "tiny-qwen3-tied")
	for _, c := range []struct {
		T          int
		want, miss []string
	}{
		{3, []string{"num_attention_heads = 4", "num_key_value_heads = 2", "intermediate_size = 128", "vocab_size = 1000"}, nil},
		{8, []string{"num_attention_heads = 4 does not divide by 8"}, []string{"intermediate_size", "vocab_size", "num_key_value_heads"}},
	} {
		devs := make([]*kern.Device, c.T)
		for i := range devs {
			devs[i] = kern.OpenNative()
		}
		m, err := LoadLocal(devs, dir)
		if err == nil {
			m.Free()
			t.Fatalf("TP=%d loaded", c.T)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("TP=%d: error lacks %q: %v", c.T, w, err)
			}
		}
		for _, w := range c.miss {
			if strings.Contains(err.Error(), w) {
				t.Errorf("TP=%d: error names %q, which divides: %v", c.T, w, err)
			}
		}
	}
	// KV heads that neither divide by T nor divide it.
	_, err := qwen3.ShardConfig(&qwen3.Config{NumAttentionHeads: 12, NumKeyValueHeads: 3, IntermediateSize: 64, VocabSize: 64}, 2)
	if err == nil || !strings.Contains(err.Error(), "num_key_value_heads = 3") {
		t.Errorf("3 KV heads over 2 ranks: %v", err)
	}
	s, err := qwen3.ShardConfig(&qwen3.Config{NumAttentionHeads: 16, NumKeyValueHeads: 2, IntermediateSize: 64, VocabSize: 64}, 8)
	if err != nil || s.NumAttentionHeads != 2 || s.NumKeyValueHeads != 1 || s.IntermediateSize != 8 {
		t.Errorf("16 heads, 2 KV heads over 8 ranks: %+v, %v; want 2 heads, 1 (replicated) KV head, width 8", s, err)
	}
}

// LoadShard reports progress over the whole checkpoint once, though a
// tied model's rank reads the embedding twice (whole, and its vocabulary
// slice as its LM head).
func TestLoadShardProgress(t *testing.T) {
	comms, _ := NewLocal(2)
	var done, total int64
	m, err := qwen3.LoadShard(kern.OpenNative(), fixture.Model(t, "tiny-qwen3-tied"), comms[1],
		qwen3.LoadOptions{Progress: func(d, tot int64) { done, total = d, tot }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if done != total || total == 0 {
		t.Errorf("progress ended at %d of %d bytes", done, total)
	}
	if m.Rank() != 1 || m.Ranks() != 2 || m.Config.IntermediateSize != 64 {
		t.Errorf("rank %d of %d, intermediate %d", m.Rank(), m.Ranks(), m.Config.IntermediateSize)
	}
}
