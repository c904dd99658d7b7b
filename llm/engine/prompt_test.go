package engine

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/gokern/kern"
)

// refLogSoftmax is the float64 log-softmax of every row of an unbatched
// forward pass over tokens on a fresh cache, [len(tokens)][vocab].
func refLogSoftmax(t *testing.T, e *Engine, tokens []int32) [][]float64 {
	t.Helper()
	m := e.Model.(Single).M
	c, err := m.NewCache(len(tokens))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	out, err := m.Forward(c, tokens, true)
	if err != nil {
		t.Fatal(err)
	}
	V := e.Config.VocabSize
	logits := make([]float32, len(tokens)*V)
	if err := out.CopyTo(logits); err != nil {
		t.Fatal(err)
	}
	rows := make([][]float64, len(tokens))
	for i := range rows {
		row := logits[i*V : (i+1)*V]
		mx := math.Inf(-1)
		for _, l := range row {
			mx = math.Max(mx, float64(l))
		}
		var sum float64
		for _, l := range row {
			sum += math.Exp(float64(l) - mx)
		}
		rows[i] = make([]float64, V)
		for v, l := range row {
			rows[i][v] = float64(l) - mx - math.Log(sum)
		}
	}
	return rows
}

// TestPromptLogprobs: a request's prompt logprobs are the float64
// log-softmax of an unbatched forward pass's logits at the row before
// each prompt token, with that token's rank and the most likely
// alternatives; the prompt (longer than one all-logits chunk) is
// prefilled whole even when the prefix cache holds its blocks, and the
// generated tokens are those of the same request without prompt
// logprobs.
func TestPromptLogprobs(t *testing.T) {
	e := open(t, kern.OpenEmulator(), "tiny-qwen3-untied")
	prompt := make([]int32, promptChunk+13)
	for i := range prompt {
		prompt[i] = int32((i*37 + 11) % 997)
	}
	const n, k = 5, 3
	plain, err := e.Generate(context.Background(), Request{Prompt: prompt, MaxTokens: n})
	if err != nil {
		t.Fatal(err)
	}
	var early []SampledLogprob // from OnPromptLogprobs, before any token
	tokensBefore := -1
	var tokens int
	res, err := e.Generate(context.Background(), Request{Prompt: prompt, MaxTokens: n, PromptLogprobs: true, PromptTopLogprobs: k,
		OnPromptLogprobs: func(lps []SampledLogprob) { early, tokensBefore = lps, tokens },
		OnToken:          func(int32) { tokens++ }})
	if err != nil {
		t.Fatal(err)
	}
	if tokensBefore != 0 || len(early) != len(res.PromptLogprobs) || len(early) == 0 {
		t.Errorf("OnPromptLogprobs: %d entries after %d tokens; the result has %d", len(early), tokensBefore, len(res.PromptLogprobs))
	}
	for i := range early {
		if early[i].TokenLogprob != res.PromptLogprobs[i].TokenLogprob {
			t.Fatalf("OnPromptLogprobs entry %d: %+v, result %+v", i, early[i].TokenLogprob, res.PromptLogprobs[i].TokenLogprob)
		}
	}
	if res.CachedTokens != 0 {
		t.Errorf("a prompt-logprobs request took %d tokens from the prefix cache", res.CachedTokens)
	}
	if len(res.Tokens) != n || len(plain.Tokens) != n {
		t.Fatalf("%d and %d tokens, want %d", len(res.Tokens), len(plain.Tokens), n)
	}
	for i := range res.Tokens {
		if res.Tokens[i] != plain.Tokens[i] {
			t.Fatalf("tokens with prompt logprobs %v, without %v", res.Tokens, plain.Tokens)
		}
	}
	if len(res.PromptLogprobs) != len(prompt)-1 {
		t.Fatalf("%d prompt logprobs for a prompt of %d", len(res.PromptLogprobs), len(prompt))
	}
	ref := refLogSoftmax(t, e, prompt)
	for i, lp := range res.PromptLogprobs {
		tok, row := prompt[i+1], ref[i]
		rank := 1
		for _, l := range row {
			if l > row[tok] {
				rank++
			}
		}
		// The chunked pass and the whole one agree to float32 rounding.
		if lp.Token != tok || math.Abs(lp.Logprob-row[tok]) > 1e-4 || lp.Rank != rank {
			t.Errorf("prompt token %d (%d): %+v rank %d, reference %v rank %d", i+1, tok, lp.TokenLogprob, lp.Rank, row[tok], rank)
		}
		order := make([]int, len(row))
		for v := range order {
			order[v] = v
		}
		sort.SliceStable(order, func(a, b int) bool { return row[order[a]] > row[order[b]] })
		if len(lp.Top) != k {
			t.Fatalf("prompt token %d: %d alternatives, want %d", i+1, len(lp.Top), k)
		}
		for r, alt := range lp.Top {
			if math.Abs(alt.Logprob-row[order[r]]) > 1e-4 || math.Abs(row[alt.Token]-alt.Logprob) > 1e-4 {
				t.Errorf("prompt token %d alternative %d: %+v, reference %d at %v", i+1, r, alt, order[r], row[order[r]])
			}
		}
	}
}

// TestPromptLogprobsMatchSampled: a prompt that is an earlier request's
// prompt and generated tokens gets, at those tokens, the logprobs that
// the earlier request reported as it sampled them (the engine's own
// softmax of the same logits, batched then and unbatched now).
func TestPromptLogprobsMatchSampled(t *testing.T) {
	e := open(t, kern.OpenEmulator(), "tiny-qwen3-tied")
	prompt := []int32{5, 17, 42, 99, 3, 250, 8}
	first, err := e.Generate(context.Background(), Request{Prompt: prompt, MaxTokens: 6, Logprobs: true, Sampling: samplingT1()})
	if err != nil {
		t.Fatal(err)
	}
	full := append(append([]int32(nil), prompt...), first.Tokens...)
	res, err := e.Generate(context.Background(), Request{Prompt: full, MaxTokens: 1, PromptLogprobs: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range first.Logprobs {
		p := res.PromptLogprobs[len(prompt)-1+i]
		if p.Token != s.Token || math.Abs(p.Logprob-s.Logprob) > 1e-4 || p.Rank != s.Rank {
			t.Errorf("generated token %d: as prompt %+v rank %d, as sampled %+v rank %d", i, p.TokenLogprob, p.Rank, s.TokenLogprob, s.Rank)
		}
	}
	if _, err := e.Generate(context.Background(), Request{Prompt: prompt, PromptLogprobs: true, PromptTopLogprobs: MaxTopLogprobs + 1}); err == nil {
		t.Error("21 prompt alternatives: no error")
	}
}
