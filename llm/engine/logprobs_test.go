package engine

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/sample"
)

// TestLogprobs: the logprobs Generate reports are the float64 log-softmax
// of the logits a separate, unbatched forward pass over the same tokens
// produces, and the top alternatives are that softmax's largest entries.
func TestLogprobs(t *testing.T) {
	e := open(t, kern.OpenEmulator(), "tiny-qwen3-untied")
	prompt := []int32{5, 17, 42, 99, 3, 250, 8}
	const n, k = 6, 5
	var streamed []SampledLogprob
	res, err := e.Generate(context.Background(), Request{Prompt: prompt, MaxTokens: n, Logprobs: true, TopLogprobs: k,
		Sampling: samplingT1(), OnLogprob: func(lp SampledLogprob) { streamed = append(streamed, lp) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Logprobs) != len(res.Tokens) || len(streamed) != len(res.Tokens) {
		t.Fatalf("%d logprobs (%d streamed) for %d tokens", len(res.Logprobs), len(streamed), len(res.Tokens))
	}
	seq := append(append([]int32(nil), prompt...), res.Tokens[:len(res.Tokens)-1]...)
	m := e.Model.(Single).M
	c, err := m.NewCache(len(seq))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	out, err := m.Forward(c, seq, true)
	if err != nil {
		t.Fatal(err)
	}
	V := e.Config.VocabSize
	logits := make([]float32, len(seq)*V)
	if err := out.CopyTo(logits); err != nil {
		t.Fatal(err)
	}
	for i, tok := range res.Tokens {
		row := logits[(len(prompt)-1+i)*V : (len(prompt)+i)*V]
		ref := make([]float64, V)
		mx := math.Inf(-1)
		for _, l := range row {
			mx = math.Max(mx, float64(l))
		}
		var sum float64
		for _, l := range row {
			sum += math.Exp(float64(l) - mx)
		}
		for v, l := range row {
			ref[v] = float64(l) - mx - math.Log(sum)
		}
		lp := res.Logprobs[i]
		// The batched step and the unbatched pass agree to float32
		// rounding of the logits; 1e-4 in log space is a relative
		// probability error of 1e-4.
		if lp.Token != tok || math.Abs(lp.Logprob-ref[tok]) > 1e-4 || lp.Logprob > 0 {
			t.Errorf("token %d (%d): logprob %v, reference %v", i, tok, lp.Logprob, ref[tok])
		}
		if streamed[i].Token != tok || streamed[i].Logprob != lp.Logprob {
			t.Errorf("token %d: streamed %+v, result %+v", i, streamed[i], lp.TokenLogprob)
		}
		order := make([]int, V)
		for v := range order {
			order[v] = v
		}
		sort.SliceStable(order, func(a, b int) bool { return ref[order[a]] > ref[order[b]] })
		if len(lp.Top) != k {
			t.Fatalf("token %d: %d top logprobs, want %d", i, len(lp.Top), k)
		}
		for r, tl := range lp.Top {
			if math.Abs(tl.Logprob-ref[order[r]]) > 1e-4 || math.Abs(ref[tl.Token]-tl.Logprob) > 1e-4 {
				t.Errorf("token %d rank %d: %+v, reference rank %d is %d at %v", i, r, tl, r, order[r], ref[order[r]])
			}
			if r > 0 && tl.Logprob > lp.Top[r-1].Logprob {
				t.Errorf("token %d: top logprobs not in order: %+v", i, lp.Top)
			}
		}
		var p float64
		for _, l := range ref {
			p += math.Exp(l)
		}
		if math.Abs(p-1) > 1e-9 {
			t.Errorf("reference softmax sums to %v", p)
		}
	}
	if _, err := e.Generate(context.Background(), Request{Prompt: prompt, TopLogprobs: MaxTopLogprobs + 1}); err == nil {
		t.Error("top_logprobs 21: no error")
	}
}

// samplingT1 samples (not greedy), so the reported logprobs are of
// tokens that are not always the most likely.
func samplingT1() sample.Params { return sample.Params{Temperature: 1.5, Seed: 11} }
