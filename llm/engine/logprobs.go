package engine

// Log probabilities of sampled tokens, as the OpenAI APIs' logprobs and
// top_logprobs report them: the log-softmax of the model's raw logits (in
// float64), before temperature, top-k/top-p or penalties, which is what
// vLLM reports by default (logprobs_mode "raw_logprobs").

import (
	"math"
	"sort"
)

// MaxTopLogprobs bounds Request.TopLogprobs (the OpenAI API's limit).
const MaxTopLogprobs = 20

// TokenLogprob is a token and its log probability.
type TokenLogprob struct {
	Token   int32
	Logprob float64
}

// SampledLogprob is a sampled (or prompt) token's log probability, its
// rank (1 for the most likely token; ties share the better rank) and the
// most likely alternatives at its position, most likely first.
type SampledLogprob struct {
	TokenLogprob
	Rank int
	Top  []TokenLogprob
}

// logprobs returns tok's log-softmax over logits and the top k.
func logprobs(logits []float32, tok int32, k int) SampledLogprob {
	mx := math.Inf(-1)
	for _, l := range logits {
		mx = math.Max(mx, float64(l))
	}
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l) - mx)
	}
	lse := mx + math.Log(sum)
	out := SampledLogprob{TokenLogprob: TokenLogprob{tok, float64(logits[tok]) - lse}, Rank: 1}
	for _, l := range logits {
		if l > logits[tok] {
			out.Rank++
		}
	}
	if k <= 0 {
		return out
	}
	// The k largest, kept sorted in a small slice (k ≤ 20 ≪ vocab).
	top := make([]TokenLogprob, 0, k+1)
	for i, l := range logits {
		v := float64(l) - lse
		if len(top) == k && v <= top[k-1].Logprob {
			continue
		}
		j := sort.Search(len(top), func(j int) bool { return top[j].Logprob < v })
		top = append(top, TokenLogprob{})
		copy(top[j+1:], top[j:])
		top[j] = TokenLogprob{int32(i), v}
		if len(top) > k {
			top = top[:k]
		}
	}
	out.Top = top
	return out
}
