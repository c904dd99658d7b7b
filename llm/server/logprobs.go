package server

// logprobs in the two APIs' shapes. Chat completions take logprobs (a
// bool) and top_logprobs (0 to 20) and answer choice.logprobs.content,
// one entry per token with its text, bytes and alternatives; text
// completions take logprobs (an int, the alternatives wanted) and answer
// the legacy parallel lists tokens / token_logprobs / top_logprobs /
// text_offset. Streamed, each chunk carries the logprobs of the tokens
// that arrived since the previous chunk. The values are the engine's
// (llm/engine/logprobs.go): the log-softmax of the raw logits.

import "github.com/gokern/kern/llm/engine"

type chatLogprobs struct {
	Content []chatLogprob `json:"content"`
}

type chatTopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

type chatLogprob struct {
	chatTopLogprob
	TopLogprobs []chatTopLogprob `json:"top_logprobs"`
}

type textLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// tokenText is a token's text as the logprobs entries show it (special
// tokens included); bytes are its UTF-8 bytes, which for a token ending
// mid-character are not valid UTF-8 on their own.
func tokenText(e *engine.Engine, id int32) (string, []int) {
	s := e.Tok.Decode([]int32{id}, false)
	b := make([]int, len(s))
	for i := range len(s) {
		b[i] = int(s[i])
	}
	return s, b
}

func chatLogprobsOf(e *engine.Engine, lps []engine.SampledLogprob) *chatLogprobs {
	out := &chatLogprobs{Content: []chatLogprob{}}
	for _, lp := range lps {
		s, b := tokenText(e, lp.Token)
		c := chatLogprob{chatTopLogprob: chatTopLogprob{s, lp.Logprob, b}, TopLogprobs: []chatTopLogprob{}}
		for _, t := range lp.Top {
			ts, tb := tokenText(e, t.Token)
			c.TopLogprobs = append(c.TopLogprobs, chatTopLogprob{ts, t.Logprob, tb})
		}
		out.Content = append(out.Content, c)
	}
	return out
}

// textLogprobsOf builds the legacy shape; offset is the text length
// before these tokens.
func textLogprobsOf(e *engine.Engine, lps []engine.SampledLogprob, offset int) *textLogprobs {
	out := &textLogprobs{Tokens: []string{}, TokenLogprobs: []float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
	for _, lp := range lps {
		s, _ := tokenText(e, lp.Token)
		out.Tokens = append(out.Tokens, s)
		out.TokenLogprobs = append(out.TokenLogprobs, lp.Logprob)
		top := map[string]float64{}
		for _, t := range lp.Top {
			ts, _ := tokenText(e, t.Token)
			if _, dup := top[ts]; !dup { // two ids may print alike; the likelier one stays
				top[ts] = t.Logprob
			}
		}
		out.TopLogprobs = append(out.TopLogprobs, top)
		out.TextOffset = append(out.TextOffset, offset)
		offset += len(s)
	}
	return out
}
