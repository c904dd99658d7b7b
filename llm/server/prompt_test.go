package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gokern/kern/llm/engine"
)

// TestPromptLogprobsAPI: prompt_logprobs (both APIs) and echo with
// logprobs (completions) answer the engine's own prompt logprobs (a
// direct Generate on the same engine), in vLLM's and the legacy shapes.
func TestPromptLogprobsAPI(t *testing.T) {
	ts, s := newServer(t, 8)
	e := s.engine()
	prompt := []int32{3, 141, 59, 265, 358, 979, 32, 38, 12}
	ref, err := e.Generate(context.Background(), engine.Request{Prompt: prompt, MaxTokens: 3, PromptLogprobs: true, PromptTopLogprobs: 2, Logprobs: true, TopLogprobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := json.Marshal(prompt)

	// vLLM's prompt_logprobs: null, then per position the prompt's token
	// (logprob, rank, decoded text) and the 2 likeliest.
	resp, body := post(t, ts.URL+"/v1/completions", `{"prompt":`+string(ids)+`,"max_tokens":3,"temperature":0,"prompt_logprobs":2}`)
	var tr struct {
		Choices []struct {
			Text           string                     `json:"text"`
			PromptLogprobs []map[string]promptLogprob `json:"prompt_logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &tr); resp.StatusCode != 200 || err != nil || len(tr.Choices) != 1 {
		t.Fatalf("completions: %d %s", resp.StatusCode, body)
	}
	pl := tr.Choices[0].PromptLogprobs
	if len(pl) != len(prompt) || pl[0] != nil || !strings.Contains(string(body), `"prompt_logprobs":[null,{`) {
		t.Fatalf("prompt_logprobs: %d entries for %d tokens, first %v", len(pl), len(prompt), pl[0])
	}
	checkVLLM := func(pl []map[string]promptLogprob) {
		t.Helper()
		for i, m := range pl[1:] {
			want := ref.PromptLogprobs[i]
			got, ok := m[strconv.Itoa(int(prompt[i+1]))]
			if !ok || got.Logprob != want.Logprob || got.Rank != want.Rank || got.Rank < 1 {
				t.Errorf("position %d: %v, want token %d at %v rank %d", i+1, m, prompt[i+1], want.Logprob, want.Rank)
			}
			for r, alt := range want.Top {
				a, ok := m[strconv.Itoa(int(alt.Token))]
				if s, _ := tokenText(e, alt.Token); !ok || a.Logprob != alt.Logprob || a.Rank != r+1 || a.DecodedToken != s {
					t.Errorf("position %d alternative %d: %v, want %+v", i+1, r, a, alt)
				}
			}
			if len(m) < 2 || len(m) > 3 {
				t.Errorf("position %d: %d entries, want the token and 2 alternatives", i+1, len(m))
			}
		}
	}
	checkVLLM(pl)
	if tr.Choices[0].Text != ref.Text {
		t.Errorf("text %q, the engine's greedy %q", tr.Choices[0].Text, ref.Text)
	}

	// Chat completions: at the response's top level.
	resp, body = post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"prompt_logprobs":0}`)
	var cr struct {
		PromptLogprobs []map[string]promptLogprob `json:"prompt_logprobs"`
		Usage          usage                      `json:"usage"`
	}
	if err := json.Unmarshal(body, &cr); resp.StatusCode != 200 || err != nil {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	if len(cr.PromptLogprobs) != cr.Usage.PromptTokens || cr.PromptLogprobs[0] != nil || len(cr.PromptLogprobs[1]) != 1 {
		t.Errorf("chat prompt_logprobs: %d entries for %d prompt tokens", len(cr.PromptLogprobs), cr.Usage.PromptTokens)
	}

	// echo with logprobs: the prompt's tokens first in the legacy lists,
	// the first one's logprob null, then the generated ones.
	resp, body = post(t, ts.URL+"/v1/completions", `{"prompt":`+string(ids)+`,"max_tokens":3,"temperature":0,"logprobs":2,"echo":true}`)
	var er struct {
		Choices []struct {
			Text     string       `json:"text"`
			Logprobs echoLogprobs `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &er); resp.StatusCode != 200 || err != nil {
		t.Fatalf("echo: %d %s", resp.StatusCode, body)
	}
	l := er.Choices[0].Logprobs
	all := append(append([]engine.SampledLogprob{{}}, ref.PromptLogprobs...), ref.Logprobs...)
	if len(l.Tokens) != len(prompt)+3 || len(l.TokenLogprobs) != len(l.Tokens) || l.TokenLogprobs[0] != nil || l.TopLogprobs[0] != nil {
		t.Fatalf("echo logprobs: %s", body)
	}
	var etext strings.Builder
	for i := range l.Tokens {
		if l.TextOffset[i] != etext.Len() {
			t.Errorf("text_offset[%d] = %d, want %d", i, l.TextOffset[i], etext.Len())
		}
		etext.WriteString(l.Tokens[i])
		if i == 0 {
			continue
		}
		if *l.TokenLogprobs[i] != all[i].Logprob || len(l.TopLogprobs[i]) == 0 {
			t.Errorf("token %d: %v top %v, want %v", i, *l.TokenLogprobs[i], l.TopLogprobs[i], all[i].Logprob)
		}
		best := math.Inf(-1)
		for _, v := range l.TopLogprobs[i] {
			best = math.Max(best, v)
		}
		if best != all[i].Top[0].Logprob {
			t.Errorf("token %d: best alternative %v, want %v", i, best, all[i].Top[0].Logprob)
		}
	}
	if er.Choices[0].Text != etext.String() || er.Choices[0].Text != e.Tok.Decode(prompt, false)+ref.Text {
		t.Errorf("echo text %q; tokens spell %q", er.Choices[0].Text, etext.String())
	}

	// echo alone repeats the prompt string, streamed or not.
	resp, body = post(t, ts.URL+"/v1/completions", `{"prompt":"The quick","max_tokens":2,"echo":true,"temperature":0}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"text":"The quick`) {
		t.Errorf("echo: %d %s", resp.StatusCode, body)
	}
	sresp, body := post(t, ts.URL+"/v1/completions", `{"prompt":"The quick","max_tokens":2,"echo":true,"temperature":0,"stream":true}`)
	chunks, done := events(t, strings.NewReader(string(body)))
	if sresp.StatusCode != 200 || !done || len(chunks) < 2 || chunks[0]["choices"].([]any)[0].(map[string]any)["text"] != "The quick" {
		t.Errorf("streamed echo: %d %s", sresp.StatusCode, body)
	}

	// Streamed: one chunk before the first token carries them, in the
	// same shapes and values.
	_, body = post(t, ts.URL+"/v1/completions", `{"prompt":`+string(ids)+`,"max_tokens":3,"temperature":0,"prompt_logprobs":2,"stream":true}`)
	chunks, done = events(t, strings.NewReader(string(body)))
	var streamed []map[string]promptLogprob
	var text strings.Builder
	for i, c := range chunks {
		var one struct {
			Choices []struct {
				Text           string                     `json:"text"`
				PromptLogprobs []map[string]promptLogprob `json:"prompt_logprobs"`
			} `json:"choices"`
		}
		b, _ := json.Marshal(c)
		json.Unmarshal(b, &one)
		if len(one.Choices) == 1 {
			text.WriteString(one.Choices[0].Text)
			if one.Choices[0].PromptLogprobs != nil {
				if streamed != nil || i != 0 {
					t.Errorf("prompt_logprobs in chunk %d (again: %v)", i, streamed != nil)
				}
				streamed = one.Choices[0].PromptLogprobs
			}
		}
	}
	if !done || len(streamed) != len(prompt) || streamed[0] != nil || text.String() != ref.Text {
		t.Fatalf("streamed: %d prompt logprobs, text %q: %s", len(streamed), text.String(), body)
	}
	checkVLLM(streamed)
	_, body = post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"prompt_logprobs":0,"stream":true}`)
	chunks, _ = events(t, strings.NewReader(string(body)))
	found := 0
	for _, c := range chunks {
		if pl, ok := c["prompt_logprobs"].([]any); ok && len(pl) == len(cr.PromptLogprobs) && pl[0] == nil {
			found++
		}
	}
	if found != 1 {
		t.Errorf("streamed chat: %d chunks with the prompt's %d logprobs: %s", found, len(cr.PromptLogprobs), body)
	}

	// echo with logprobs, streamed: the prompt's chunk first, with its
	// lists; all the chunks' lists and text make the unstreamed answer's.
	_, body = post(t, ts.URL+"/v1/completions", `{"prompt":`+string(ids)+`,"max_tokens":3,"temperature":0,"logprobs":2,"echo":true,"stream":true}`)
	chunks, _ = events(t, strings.NewReader(string(body)))
	var sl echoLogprobs
	text.Reset()
	for _, c := range chunks {
		var one struct {
			Choices []struct {
				Text     string        `json:"text"`
				Logprobs *echoLogprobs `json:"logprobs"`
			} `json:"choices"`
		}
		b, _ := json.Marshal(c)
		json.Unmarshal(b, &one)
		if len(one.Choices) == 1 {
			text.WriteString(one.Choices[0].Text)
			if l := one.Choices[0].Logprobs; l != nil {
				sl.Tokens = append(sl.Tokens, l.Tokens...)
				sl.TokenLogprobs = append(sl.TokenLogprobs, l.TokenLogprobs...)
				sl.TextOffset = append(sl.TextOffset, l.TextOffset...)
			}
		}
	}
	if text.String() != er.Choices[0].Text || fmt.Sprint(sl.Tokens) != fmt.Sprint(l.Tokens) || fmt.Sprint(sl.TextOffset) != fmt.Sprint(l.TextOffset) || sl.TokenLogprobs[0] != nil {
		t.Errorf("streamed echo: text %q tokens %q offsets %v; unstreamed %q %q %v", text.String(), sl.Tokens, sl.TextOffset, er.Choices[0].Text, l.Tokens, l.TextOffset)
	}
	for i := 1; i < len(sl.TokenLogprobs) && i < len(l.TokenLogprobs); i++ {
		if *sl.TokenLogprobs[i] != *l.TokenLogprobs[i] {
			t.Errorf("streamed echo token %d: logprob %v, unstreamed %v", i, *sl.TokenLogprobs[i], *l.TokenLogprobs[i])
		}
	}

	for _, bad := range []string{`"prompt_logprobs":21`, `"prompt_logprobs":-1`} {
		if resp, _ := post(t, ts.URL+"/v1/completions", `{"prompt":"x",`+bad+`}`); resp.StatusCode != 400 {
			t.Errorf("%s: %d, want 400", bad, resp.StatusCode)
		}
	}
}
