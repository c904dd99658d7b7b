package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/engine"
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/llm/tokenizer"
)

// scripted is an engine.Runner whose logits make greedy decoding produce
// a fixed token sequence and then EOS: a model steered to answer with
// <think>…</think><tool_call>…</tool_call>, which no tiny random model
// does. Everything above the forward pass (scheduler, sampler, stop
// handling, detokenizing, the server's parsers and the HTTP stream) is
// the real one. Its KV pool is a tiny random model's (the positions are
// reserved and advanced as a model's are, nothing is read back).
type scripted struct {
	pool   *qwen3.Model
	dev    *kern.Device
	vocab  int
	script []int32
	eos    int32
	mu     sync.Mutex
	steps  map[*qwen3.Seq]int
}

func (s *scripted) NewKVPool(pages, pageSize int) (*qwen3.KVPool, error) {
	return s.pool.NewKVPool(pages, pageSize)
}

func (s *scripted) Forward(seqs []*qwen3.Seq, tokens [][]int32, all bool) (*kern.Buffer[float32], error) {
	if all {
		return nil, fmt.Errorf("scripted: no prompt logprobs")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	logits := make([]float32, len(seqs)*s.vocab)
	for i, q := range seqs {
		q.Len += len(tokens[i])
		next := s.eos
		if k := s.steps[q]; k < len(s.script) {
			next = s.script[k]
		}
		s.steps[q]++
		logits[i*s.vocab+int(next)] = 30 // the rest 0: softmax mass ≈ 1 - 1e-8
	}
	return kern.Upload(s.dev, logits)
}

func (s *scripted) Free() { s.pool.Free() }

// scriptedServer serves a scripted engine with Qwen3's tokenizer and
// chat template, splitting reasoning as `qwen3 serve -reasoning` does.
func scriptedServer(t *testing.T, reply string) *httptest.Server {
	t.Helper()
	tok, err := tokenizer.Load(fixture.QwenTokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	dev := kern.OpenEmulator()
	pool, err := qwen3.NewRandom(dev, qwen3.Presets["tiny"], 1)
	if err != nil {
		t.Fatal(err)
	}
	eos, ok := tok.TokenID("<|im_end|>")
	if !ok {
		t.Fatal("no <|im_end|> in the tokenizer")
	}
	r := &scripted{pool: pool, dev: dev, vocab: tok.VocabSize(), script: tok.Encode(reply), eos: eos, steps: map[*qwen3.Seq]int{}}
	cfg := &qwen3.Config{VocabSize: tok.VocabSize(), MaxPositionEmbeddings: 4096, EOSTokenID: qwen3.IDs{int(eos)}}
	e, err := engine.NewRunner(r, cfg, nil, tok, engine.Options{Context: 2048, PrefillChunk: 2048})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer((&Server{Engine: e, ModelName: "scripted", SplitReasoning: true}).Handler())
	t.Cleanup(func() { ts.Close(); e.Close() })
	return ts
}

const weatherTools = `[{"type":"function","function":{"name":"get_weather","description":"Current weather in a city",
 "parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}}}]`

// TestToolCallsStreamedEndToEnd: a chat request with tools and thinking
// on, answered by a model whose reply is
// <think>…</think> and two <tool_call> blocks, streams reasoning_content
// deltas, then one tool_calls delta per call in OpenAI's shape (index,
// id, type, function name and whole arguments), then finish_reason
// "tool_calls" and [DONE]; the same request not streamed answers the
// same reasoning and calls in one message.
func TestToolCallsStreamedEndToEnd(t *testing.T) {
	reasoning := "The user asks for the weather in two cities, so I call get_weather for each."
	calls := []string{`{"city": "Paris", "unit": "celsius"}`, `{"city": "Tōkyō"}`}
	reply := "<think>\n" + reasoning + "\n</think>\n\n" +
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + calls[0] + "}\n</tool_call>\n" +
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + calls[1] + "}\n</tool_call>"
	ts := scriptedServer(t, reply)
	req := `{"messages":[{"role":"user","content":"Weather in Paris and Tokyo?"}],"tools":` + weatherTools +
		`,"chat_template_kwargs":{"enable_thinking":true},"max_tokens":200%s}`

	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(fmt.Sprintf(req, `,"stream":true`)))
	if err != nil {
		t.Fatal(err)
	}
	chunks, done := events(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !done {
		t.Fatalf("stream: %d, [DONE] %v, %d chunks", resp.StatusCode, done, len(chunks))
	}
	var gotReasoning, content strings.Builder
	var reasoningDeltas int
	var got []toolCall
	finish := ""
	for i, c := range chunks {
		if c["object"] != "chat.completion.chunk" {
			t.Errorf("chunk %d: object %v", i, c["object"])
		}
		ch := c["choices"].([]any)[0].(map[string]any)
		if f, ok := ch["finish_reason"].(string); ok {
			finish = f
			if i != len(chunks)-1 {
				t.Errorf("finish_reason in chunk %d of %d", i, len(chunks))
			}
		}
		d := ch["delta"].(map[string]any)
		if i == 0 && d["role"] != "assistant" {
			t.Errorf("first delta %v, want the assistant role", d)
		}
		if r, ok := d["reasoning_content"].(string); ok && r != "" {
			if len(got) > 0 {
				t.Errorf("chunk %d: reasoning after a tool call", i)
			}
			gotReasoning.WriteString(r)
			reasoningDeltas++
		}
		if s, _ := d["content"].(string); s != "" {
			content.WriteString(s)
		}
		raw, ok := d["tool_calls"]
		if !ok {
			continue
		}
		// OpenAI's streamed shape: a list of calls, each with its index.
		b, _ := json.Marshal(raw)
		var tc []toolCall
		if err := json.Unmarshal(b, &tc); err != nil || len(tc) != 1 || tc[0].Index == nil {
			t.Fatalf("chunk %d: tool_calls %s", i, b)
		}
		m := raw.([]any)[0].(map[string]any)
		f, _ := m["function"].(map[string]any)
		_, isIndex := m["index"].(float64)
		_, isID := m["id"].(string)
		_, isArgs := f["arguments"].(string) // a JSON string, not an object
		if !isIndex || !isID || m["type"] != "function" || f["name"] != "get_weather" || !isArgs || len(m) != 4 || len(f) != 2 {
			t.Errorf("chunk %d: tool_calls %s not in OpenAI's shape", i, b)
		}
		got = append(got, tc[0])
	}
	if reasoningDeltas < 2 || strings.TrimSpace(gotReasoning.String()) != reasoning {
		t.Errorf("reasoning_content in %d deltas: %q, want %q token by token", reasoningDeltas, gotReasoning.String(), reasoning)
	}
	if strings.TrimSpace(content.String()) != "" {
		t.Errorf("content deltas %q, want none (the reply is reasoning and calls)", content.String())
	}
	if finish != "tool_calls" {
		t.Errorf("finish_reason %q, want tool_calls", finish)
	}
	checkCalls := func(kind string, got []toolCall, streamed bool) {
		t.Helper()
		if len(got) != len(calls) {
			t.Fatalf("%s: %d tool calls, want %d", kind, len(got), len(calls))
		}
		ids := map[string]bool{}
		for i, c := range got {
			if streamed && *c.Index != i {
				t.Errorf("%s call %d: index %d", kind, i, *c.Index)
			}
			if c.ID == "" || ids[c.ID] || c.Type != "function" || c.Function.Name != "get_weather" {
				t.Errorf("%s call %d: %+v", kind, i, c)
			}
			ids[c.ID] = true
			var a, w any
			if json.Unmarshal([]byte(c.Function.Arguments), &a) != nil || json.Unmarshal([]byte(calls[i]), &w) != nil || fmt.Sprint(a) != fmt.Sprint(w) {
				t.Errorf("%s call %d: arguments %s, want %s", kind, i, c.Function.Arguments, calls[i])
			}
		}
	}
	checkCalls("streamed", got, true)

	resp2, body := post(t, ts.URL+"/v1/chat/completions", fmt.Sprintf(req, ""))
	var cr struct {
		Choices []struct {
			Message      chatMessage `json:"message"`
			FinishReason string      `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &cr); resp2.StatusCode != 200 || err != nil || len(cr.Choices) != 1 {
		t.Fatalf("not streamed: %d %s", resp2.StatusCode, body)
	}
	m := cr.Choices[0].Message
	if strings.TrimSpace(m.ReasoningContent) != reasoning || strings.TrimSpace(m.Content) != "" || cr.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("message %+v finish %q", m, cr.Choices[0].FinishReason)
	}
	checkCalls("not streamed", m.ToolCalls, false)
}
