package server

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
)

// TestLogprobsAPI: both APIs return one logprob per generated token, the
// alternatives in order, the greedy token as the top alternative, and
// the same values streamed as not.
func TestLogprobsAPI(t *testing.T) {
	ts, _ := newServer(t, 8)
	chatBody := `{"messages":[{"role":"user","content":"count"}],"max_tokens":5,"temperature":0,"logprobs":true,"top_logprobs":3%s}`
	resp, body := post(t, ts.URL+"/v1/chat/completions", strings.Replace(chatBody, "%s", "", 1))
	var cr struct {
		Choices []struct {
			Message  chatMessage  `json:"message"`
			Logprobs chatLogprobs `json:"logprobs"`
		} `json:"choices"`
		Usage usage `json:"usage"`
	}
	if err := json.Unmarshal(body, &cr); resp.StatusCode != 200 || err != nil || len(cr.Choices) != 1 {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	lps := cr.Choices[0].Logprobs.Content
	if len(lps) != cr.Usage.CompletionTokens {
		t.Fatalf("%d logprobs for %d tokens", len(lps), cr.Usage.CompletionTokens)
	}
	var text strings.Builder
	for i, lp := range lps {
		if len(lp.TopLogprobs) != 3 || lp.TopLogprobs[0].Token != lp.Token || lp.TopLogprobs[0].Logprob != lp.Logprob || lp.Logprob > 0 {
			t.Errorf("token %d: %+v; greedy, so it is the top alternative", i, lp)
		}
		for r := 1; r < len(lp.TopLogprobs); r++ {
			if lp.TopLogprobs[r].Logprob > lp.TopLogprobs[r-1].Logprob {
				t.Errorf("token %d: alternatives out of order", i)
			}
		}
		if string(bytesOf(lp.Bytes)) != lp.Token {
			t.Errorf("token %d: bytes %v, token %q", i, lp.Bytes, lp.Token)
		}
		text.WriteString(lp.Token)
	}
	if !strings.HasPrefix(text.String(), cr.Choices[0].Message.Content) {
		t.Errorf("tokens spell %q, content %q", text.String(), cr.Choices[0].Message.Content)
	}

	// Streamed: the chunks' logprobs, in order, are the same.
	sresp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(strings.Replace(chatBody, "%s", `,"stream":true`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	chunks, _ := events(t, sresp.Body)
	sresp.Body.Close()
	var got []float64
	for _, c := range chunks {
		for _, ch := range c["choices"].([]any) {
			if l, ok := ch.(map[string]any)["logprobs"].(map[string]any); ok {
				for _, x := range l["content"].([]any) {
					got = append(got, x.(map[string]any)["logprob"].(float64))
				}
			}
		}
	}
	if len(got) != len(lps) {
		t.Fatalf("streamed %d logprobs, want %d", len(got), len(lps))
	}
	for i := range got {
		if got[i] != lps[i].Logprob {
			t.Errorf("token %d: streamed %v, not streamed %v", i, got[i], lps[i].Logprob)
		}
	}

	// Completions: the legacy lists.
	resp, body = post(t, ts.URL+"/v1/completions", `{"prompt":"The quick","max_tokens":4,"temperature":0,"logprobs":2}`)
	var tr struct {
		Choices []struct {
			Text     string       `json:"text"`
			Logprobs textLogprobs `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &tr); resp.StatusCode != 200 || err != nil {
		t.Fatalf("completions: %d %s", resp.StatusCode, body)
	}
	l := tr.Choices[0].Logprobs
	if len(l.Tokens) != 4 || len(l.TokenLogprobs) != 4 || len(l.TopLogprobs) != 4 || len(l.TextOffset) != 4 || l.TextOffset[0] != 0 {
		t.Fatalf("logprobs %+v", l)
	}
	for i := range l.Tokens {
		best := math.Inf(-1)
		for _, v := range l.TopLogprobs[i] {
			best = math.Max(best, v)
		}
		if len(l.TopLogprobs[i]) == 0 || len(l.TopLogprobs[i]) > 2 || best != l.TokenLogprobs[i] {
			t.Errorf("token %d: %q %v top %v", i, l.Tokens[i], l.TokenLogprobs[i], l.TopLogprobs[i])
		}
		if i > 0 && l.TextOffset[i] != l.TextOffset[i-1]+len(l.Tokens[i-1]) {
			t.Errorf("text_offset %v for tokens %q", l.TextOffset, l.Tokens)
		}
	}
	for _, bad := range []string{`"logprobs":21`, `"logprobs":-1`} {
		if resp, _ := post(t, ts.URL+"/v1/completions", `{"prompt":"x",`+bad+`}`); resp.StatusCode != 400 {
			t.Errorf("%s: %d, want 400", bad, resp.StatusCode)
		}
	}
	if resp, _ := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"top_logprobs":2}`); resp.StatusCode != 400 {
		t.Errorf("top_logprobs without logprobs: %d, want 400", resp.StatusCode)
	}
}

func bytesOf(b []int) []byte {
	out := make([]byte, len(b))
	for i, x := range b {
		out[i] = byte(x)
	}
	return out
}
