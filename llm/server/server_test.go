package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/engine"
)

func newServer(t *testing.T, maxQueue int) (*httptest.Server, *Server) {
	t.Helper()
	e, err := engine.Open(kern.OpenEmulator(), fixture.Model(t, "tiny-qwen3-tied"), engine.Options{TokenizerDir: fixture.Tokenizer(t)})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Engine: e, ModelName: "tiny-qwen3", MaxQueue: maxQueue}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); e.Close() })
	return ts, s
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// events reads an SSE body: the JSON payloads, and whether [DONE] came.
func events(t *testing.T, r io.Reader) ([]map[string]any, bool) {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not an SSE data line: %q", line)
		}
		if data == "[DONE]" {
			return out, true
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		out = append(out, m)
	}
	return out, false
}

// streamedContent concatenates the deltas of chat chunks.
func streamedContent(chunks []map[string]any) (string, string) {
	var b strings.Builder
	finish := ""
	for _, c := range chunks {
		for _, ch := range c["choices"].([]any) {
			m := ch.(map[string]any)
			if d, ok := m["delta"].(map[string]any); ok {
				b.WriteString(d["content"].(string))
			}
			if t, ok := m["text"].(string); ok {
				b.WriteString(t)
			}
			if f, ok := m["finish_reason"].(string); ok {
				finish = f
			}
		}
	}
	return b.String(), finish
}

func TestEndpoints(t *testing.T) {
	ts, srv := newServer(t, 8)
	srv.SplitReasoning = true // the tiny model's replies never open with <think>: all content
	resp, body := get(t, ts.URL+"/health")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "ok") {
		t.Errorf("/health: %d %s", resp.StatusCode, body)
	}
	resp, body = get(t, ts.URL+"/v1/models")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"id":"tiny-qwen3"`) {
		t.Errorf("/v1/models: %d %s", resp.StatusCode, body)
	}

	chat := `{"model":"tiny-qwen3","messages":[{"role":"user","content":"hello world"}],"max_tokens":6,"temperature":0.7,"seed":5%s}`
	resp, body = post(t, ts.URL+"/v1/chat/completions", fmt.Sprintf(chat, ""))
	if resp.StatusCode != 200 {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	var cr chatResponse
	if err := json.Unmarshal(body, &cr); err != nil {
		t.Fatal(err)
	}
	if cr.Object != "chat.completion" || len(cr.Choices) != 1 || cr.Choices[0].Message.Role != "assistant" ||
		cr.Usage == nil || cr.Usage.CompletionTokens == 0 || cr.Usage.TotalTokens != cr.Usage.PromptTokens+cr.Usage.CompletionTokens {
		t.Errorf("chat response: %s", body)
	}

	// The same request streamed: the same text, a finish reason, usage, [DONE].
	sresp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(fmt.Sprintf(chat, `,"stream":true,"stream_options":{"include_usage":true}`)))
	if err != nil {
		t.Fatal(err)
	}
	if ct := sresp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("stream content type %q", ct)
	}
	chunks, done := events(t, sresp.Body)
	sresp.Body.Close()
	text, finish := streamedContent(chunks)
	if !done || text != cr.Choices[0].Message.Content || finish != *cr.Choices[0].FinishReason {
		t.Errorf("stream: done %v text %q finish %q; non-streamed %q %q", done, text, finish, cr.Choices[0].Message.Content, *cr.Choices[0].FinishReason)
	}
	if strings.Contains(string(body), "reasoning_content") {
		t.Errorf("reasoning_content in a reply without <think>: %s", body)
	}
	if last := chunks[len(chunks)-1]; last["usage"] == nil {
		t.Errorf("no usage chunk: %v", last)
	}

	resp, body = post(t, ts.URL+"/v1/completions", `{"model":"tiny-qwen3","prompt":"The quick brown","max_tokens":5,"temperature":0}`)
	var tr textResponse
	if err := json.Unmarshal(body, &tr); resp.StatusCode != 200 || err != nil || tr.Object != "text_completion" || tr.Usage.CompletionTokens != 5 || *tr.Choices[0].FinishReason != "length" {
		t.Errorf("completions: %d %s", resp.StatusCode, body)
	}

	resp, body = get(t, ts.URL+"/metrics")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `vllm:generation_tokens_total{model_name="tiny-qwen3"} `) || !strings.Contains(string(body), `vllm:kv_cache_usage_perc{model_name="tiny-qwen3"} 0`+"\n") {
		t.Errorf("/metrics: %s", body)
	}
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestMalformedRequests(t *testing.T) {
	ts, _ := newServer(t, 8)
	long := strings.Repeat("word ", 400)
	cases := []struct {
		path, body string
		status     int
		want       string
	}{
		{"/v1/chat/completions", `{"messages":[`, 400, "bad JSON"},
		{"/v1/chat/completions", `{"messages":[]}`, 400, "messages"},
		{"/v1/chat/completions", `{"messages":[{"role":"robot","content":"x"}]}`, 400, "role"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"temperature":-1}`, 400, "temperature"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"top_p":0}`, 400, "top_p"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":0}`, 400, "max_tokens"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"n":3}`, 400, "n"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"stop":5}`, 400, "stop"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"` + long + `"}]}`, 400, "context_length_exceeded"},
		{"/v1/completions", `{"prompt":{"a":1}}`, 400, "prompt"},
		{"/v1/completions", `{"prompt":[5, 100000]}`, 400, "vocabulary"},
		{"/v1/completions", `{"prompt":""}`, 400, "empty"},
		{"/v1/nothing", `{}`, 404, "no route"},
		{"/v1/completions", `{"model":"gpt-4","prompt":"x"}`, 404, "model_not_found"},
	}
	for _, c := range cases {
		resp, body := post(t, ts.URL+c.path, c.body)
		var e struct {
			Error apiError `json:"error"`
		}
		if resp.StatusCode != c.status || json.Unmarshal(body, &e) != nil || e.Error.Message == "" || e.Error.Type == "" || !strings.Contains(string(body), c.want) {
			t.Errorf("%s %s: %d %s; want %d mentioning %q in OpenAI's error shape", c.path, c.body[:min(len(c.body), 60)], resp.StatusCode, body, c.status, c.want)
		}
	}
	resp, _ := get(t, ts.URL+"/v1/chat/completions")
	if resp.StatusCode != 405 && resp.StatusCode != 404 {
		t.Errorf("GET on a POST route: %d", resp.StatusCode)
	}
}

// TestConcurrentStreamsMatchSolo: 16 concurrent seeded streaming requests,
// batched by the engine, each receive exactly what the same request
// alone receives.
func TestConcurrentStreamsMatchSolo(t *testing.T) {
	ts, s := newServer(t, 32)
	body := func(seed int) string { // short prompts: the solo runs are the test's cost
		return fmt.Sprintf(`{"prompt":[%d, %d],"max_tokens":3,"temperature":1,"top_k":40,"seed":%d,"stream":true}`, 10+seed, 20+seed, seed)
	}
	stream := func(seed int) (string, error) {
		resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(body(seed)))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("status %d", resp.StatusCode)
		}
		chunks, done := events(t, resp.Body)
		if !done {
			return "", fmt.Errorf("no [DONE]")
		}
		text, _ := streamedContent(chunks)
		return text, nil
	}
	const n = 16
	solo := make([]string, n)
	for i := range solo {
		var err error
		if solo[i], err = stream(i); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = stream(i)
		}()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != solo[i] {
			t.Errorf("request %d: concurrent %q (%v), solo %q", i, got[i], errs[i], solo[i])
		}
	}
	if st := s.Engine.Stats(); st.MaxBatch < 2 {
		t.Errorf("the concurrent requests were not batched: %+v", st)
	}
}

// TestFloodStaysBounded: 1,000 requests, up to 256 at once, against a
// queue of 8: each gets 200 or 429, and afterwards no goroutine is left
// behind, the engine is idle and the heap has not grown by more than a
// few MB (nothing is kept per request).
func TestFloodStaysBounded(t *testing.T) {
	ts, s := newServer(t, 8)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before, heap0 := runtime.NumGoroutine(), heap()
	const n = 1000
	codes := make([]int, n)
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 256}}
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"hi","max_tokens":1}`))
			if err != nil {
				codes[i] = -1
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	client.CloseIdleConnections()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	if count[200]+count[429] != n || count[429] == 0 || count[200] == 0 {
		t.Errorf("status counts %v: want only 200 and 429, some of each", count)
	}
	if got := s.m.rejected.Load(); got != int64(count[429]) {
		t.Errorf("metrics say %d rejected, clients saw %d", got, count[429])
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before+4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before+4 {
		t.Errorf("%d goroutines after the flood, %d before", g, before)
	}
	if st := s.Engine.Stats(); st.Running != 0 || st.Waiting != 0 {
		t.Errorf("engine still busy: %+v", st)
	}
	if grown := int64(heap()) - int64(heap0); grown > 16<<20 {
		t.Errorf("heap grew by %d MB over the flood", grown>>20)
	}
}

// TestQueueFullAndDisconnect: with a queue of one, a second request while
// the first streams gets 429; the first's client then disconnects, its
// generation stops, and the server serves again.
func TestQueueFullAndDisconnect(t *testing.T) {
	ts, s := newServer(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"go on"}],"max_tokens":100,"temperature":0,"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the role chunk: the request holds the slot
		t.Fatal(err)
	}
	r2, body := post(t, ts.URL+"/v1/completions", `{"prompt":"hi","max_tokens":2}`)
	if r2.StatusCode != 429 || !bytes.Contains(body, []byte("rate_limit_error")) {
		t.Errorf("second request: %d %s, want 429", r2.StatusCode, body)
	}
	cancel() // the client goes away mid-stream
	resp.Body.Close()
	deadline := time.Now().Add(30 * time.Second)
	for s.m.cancelled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s.m.cancelled.Load() == 0 {
		t.Fatal("the disconnected request was not cancelled")
	}
	if n := s.Engine.Metrics.GenerationTokens.Load(); n >= 100 {
		t.Errorf("the disconnected request generated all %d tokens", n)
	}
	for time.Now().Before(deadline) {
		if r3, _ := post(t, ts.URL+"/v1/completions", `{"prompt":"hi","max_tokens":2}`); r3.StatusCode == 200 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("the server did not recover after the disconnect")
}
