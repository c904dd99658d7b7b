package server

// Prompt logprobs in the two shapes clients ask for them:
//
//   - vLLM's prompt_logprobs (an int, the alternatives wanted, in both
//     APIs): per prompt position a map from token id (a string) to its
//     logprob, rank and decoded text, holding the prompt's own token and
//     the most likely alternatives; the first position, with nothing
//     before it, is null. Completions put the list in the choice, chat
//     completions at the top of the response, as vLLM does.
//   - the completions API's echo with logprobs: the prompt comes back
//     before the completion, in the text and in the legacy parallel
//     lists, the first token's logprob and alternatives null.
//
// Both come from engine.Request.PromptLogprobs (llm/engine/prompt.go).
// Streamed, they arrive (OnPromptLogprobs) before the first token and go
// out in one chunk of their own (handlers.go).

import (
	"strconv"

	"github.com/gokern/kern/llm/engine"
)

type promptLogprob struct {
	Logprob      float64 `json:"logprob"`
	Rank         int     `json:"rank"`
	DecodedToken string  `json:"decoded_token"`
}

// vllmPromptLogprobs builds prompt_logprobs with k alternatives a
// position.
func vllmPromptLogprobs(e *engine.Engine, lps []engine.SampledLogprob, k int) []map[string]promptLogprob {
	out := []map[string]promptLogprob{nil}
	for _, lp := range lps {
		m := map[string]promptLogprob{}
		for r, alt := range lp.Top[:min(k, len(lp.Top))] {
			s, _ := tokenText(e, alt.Token)
			m[itoa(alt.Token)] = promptLogprob{alt.Logprob, r + 1, s}
		}
		s, _ := tokenText(e, lp.Token)
		m[itoa(lp.Token)] = promptLogprob{lp.Logprob, lp.Rank, s}
		out = append(out, m)
	}
	return out
}

func itoa(id int32) string { return strconv.Itoa(int(id)) }

// echoLogprobs is the legacy lists with the prompt's tokens first.
type echoLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// echoLogprobsOf lists prompt (its logprobs, one per token after the
// first, in plp) then the generated tokens (gen), k alternatives each.
func echoLogprobsOf(e *engine.Engine, prompt []int32, plp, gen []engine.SampledLogprob, k int) *echoLogprobs {
	out := &echoLogprobs{}
	offset := 0
	add := func(id int32, lp *float64, top map[string]float64) {
		s, _ := tokenText(e, id)
		out.Tokens = append(out.Tokens, s)
		out.TokenLogprobs = append(out.TokenLogprobs, lp)
		out.TopLogprobs = append(out.TopLogprobs, top)
		out.TextOffset = append(out.TextOffset, offset)
		offset += len(s)
	}
	tops := func(lp engine.SampledLogprob) map[string]float64 {
		m := map[string]float64{}
		for _, t := range lp.Top[:min(k, len(lp.Top))] {
			s, _ := tokenText(e, t.Token)
			if _, dup := m[s]; !dup { // two ids may print alike; the likelier one stays
				m[s] = t.Logprob
			}
		}
		return m
	}
	add(prompt[0], nil, nil)
	for _, lp := range append(append([]engine.SampledLogprob(nil), plp...), gen...) {
		v := lp.Logprob
		add(lp.Token, &v, tops(lp))
	}
	return out
}
