package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/engine"
)

// scrape reads /metrics into sample name (with labels) → value, checking
// that every sample line parses and every family has HELP and TYPE.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, body := get(t, url+"/metrics")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := map[string]float64{}
	typed := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, kind, _ := strings.Cut(f, " ")
			typed[name] = kind
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("bad sample line %q", line)
		}
		name := line[:i]
		fam, _, _ := strings.Cut(name, "{")
		if typed[fam] == "" && typed[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(fam, "_bucket"), "_sum"), "_count")] != "histogram" {
			t.Errorf("sample %q has no # TYPE", name)
		}
		out[name] = v
	}
	return out
}

const lbl = `{model_name="tiny-qwen3"}`

func histCount(m map[string]float64, name string) float64 { return m[name+"_count"+lbl] }

// TestMetricsMove drives a one-slot engine with a real HTTP client: a
// long streamed request runs, a second one queues behind it, the first is
// cancelled, the second finishes; the vLLM gauges, counters and
// histograms follow each stage.
func TestMetricsMove(t *testing.T) {
	e, err := engine.Open(kern.OpenEmulator(), fixture.Model(t, "tiny-qwen3-tied"),
		engine.Options{TokenizerDir: fixture.Tokenizer(t), MaxBatch: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Engine: e, ModelName: "tiny-qwen3"}
	ts := httptest.NewServer(srv.Handler())
	defer func() { ts.Close(); e.Close() }()

	m := scrape(t, ts.URL)
	for _, k := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:prompt_tokens_total", "vllm:generation_tokens_total"} {
		if v, ok := m[k+lbl]; !ok || v != 0 {
			t.Errorf("idle %s = %v (present %v), want 0", k, v, ok)
		}
	}

	// A: a token-id prompt that generates until cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/completions",
		strings.NewReader(`{"prompt":[11,12,13,14,15],"max_tokens":100000,"temperature":0,"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	respA, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if respA.StatusCode != 200 {
		t.Fatalf("A: %d", respA.StatusCode)
	}
	br := bufio.NewReader(respA.Body)
	if _, err := br.ReadString('\n'); err != nil { // A has produced a token: it runs
		t.Fatal(err)
	}
	// B: queued behind A (the batch holds one).
	doneB := make(chan []byte, 1)
	go func() {
		_, b := post(t, ts.URL+"/v1/completions", `{"prompt":[21,22,23],"max_tokens":3,"temperature":0}`)
		doneB <- b
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		m = scrape(t, ts.URL)
		if m["vllm:num_requests_running"+lbl] == 1 && m["vllm:num_requests_waiting"+lbl] == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw 1 running and 1 waiting: running %v waiting %v",
				m["vllm:num_requests_running"+lbl], m["vllm:num_requests_waiting"+lbl])
		}
		time.Sleep(5 * time.Millisecond)
	}
	if u := m["vllm:kv_cache_usage_perc"+lbl]; !(u > 0 && u <= 1) {
		t.Errorf("kv_cache_usage_perc %v while A runs, want in (0, 1]", u)
	}
	if g := m["vllm:generation_tokens_total"+lbl]; g < 1 {
		t.Errorf("generation_tokens_total %v while A runs", g)
	}
	if n := histCount(m, "vllm:time_to_first_token_seconds"); n != 1 {
		t.Errorf("time_to_first_token count %v while A runs, want 1", n)
	}
	cancel()
	respA.Body.Close()
	b := <-doneB
	var tr textResponse
	if err := json.Unmarshal(b, &tr); err != nil || tr.Usage == nil || tr.Usage.PromptTokens != 3 || tr.Usage.CompletionTokens != 3 {
		t.Fatalf("B: %s", b)
	}
	for {
		m = scrape(t, ts.URL)
		if m["vllm:num_requests_running"+lbl] == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	want := map[string]float64{
		"vllm:num_requests_running": 0, "vllm:num_requests_waiting": 0, "vllm:kv_cache_usage_perc": 0,
		"vllm:prompt_tokens_total": 5 + 3,
	}
	for k, v := range want {
		if m[k+lbl] != v {
			t.Errorf("after: %s = %v, want %v", k, m[k+lbl], v)
		}
	}
	gen := m["vllm:generation_tokens_total"+lbl]
	if gen < 3+1 {
		t.Errorf("generation_tokens_total %v, want ≥ 4", gen)
	}
	if n := histCount(m, "vllm:time_to_first_token_seconds"); n != 2 {
		t.Errorf("time_to_first_token count %v, want 2", n)
	}
	// Every token but each request's first has an inter-token latency.
	if n := histCount(m, "vllm:inter_token_latency_seconds"); n != gen-2 {
		t.Errorf("inter_token_latency count %v, want generation_tokens_total - 2 = %v", n, gen-2)
	}
	// Only B finished: one e2e latency, one success by length.
	if n := histCount(m, "vllm:e2e_request_latency_seconds"); n != 1 {
		t.Errorf("e2e_request_latency count %v, want 1", n)
	}
	if n := m[`vllm:request_success_total{model_name="tiny-qwen3",finished_reason="length"}`]; n != 1 {
		t.Errorf("request_success_total{length} %v, want 1", n)
	}
	// Histogram buckets are cumulative and end at the count.
	for _, h := range []string{"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds", "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds"} {
		prev := -1.0
		for k, v := range m {
			if !strings.HasPrefix(k, h+"_bucket{") {
				continue
			}
			if strings.HasSuffix(k, `le="+Inf"}`) && v != histCount(m, h) {
				t.Errorf("%s: +Inf bucket %v, count %v", h, v, histCount(m, h))
			}
			prev = max(prev, v)
		}
		if prev < 0 {
			t.Errorf("%s: no buckets", h)
		}
		if m[h+"_sum"+lbl] < 0 {
			t.Errorf("%s: negative sum", h)
		}
	}
}

// TestReady: a server listening before its model is loaded is healthy
// but not ready, and refuses completions with 503 until SetEngine.
func TestReady(t *testing.T) {
	srv := &Server{ModelName: "tiny-qwen3"}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	if resp, _ := get(t, ts.URL+"/health"); resp.StatusCode != 200 {
		t.Errorf("/health while loading: %d, want 200", resp.StatusCode)
	}
	if resp, _ := get(t, ts.URL+"/ready"); resp.StatusCode != 503 {
		t.Errorf("/ready while loading: %d, want 503", resp.StatusCode)
	}
	if resp, body := post(t, ts.URL+"/v1/completions", `{"prompt":"hi"}`); resp.StatusCode != 503 {
		t.Errorf("completion while loading: %d %s, want 503", resp.StatusCode, body)
	}
	if _, body := get(t, ts.URL+"/metrics"); !strings.Contains(string(body), "kern_requests_total") {
		t.Errorf("/metrics while loading: %s", body)
	}
	e, err := engine.Open(kern.OpenEmulator(), fixture.Model(t, "tiny-qwen3-tied"), engine.Options{TokenizerDir: fixture.Tokenizer(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv.SetEngine(e)
	if resp, _ := get(t, ts.URL+"/ready"); resp.StatusCode != 200 {
		t.Errorf("/ready once loaded: %d, want 200", resp.StatusCode)
	}
	// A token-id prompt gives what the same prompt as text gives.
	text := "The quick brown"
	ids, _ := json.Marshal(e.Tok.Encode(text))
	_, a := post(t, ts.URL+"/v1/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":4,"temperature":0}`, text))
	_, b := post(t, ts.URL+"/v1/completions", fmt.Sprintf(`{"prompt":%s,"max_tokens":4,"temperature":0}`, ids))
	var ra, rb textResponse
	if json.Unmarshal(a, &ra) != nil || json.Unmarshal(b, &rb) != nil || len(ra.Choices) != 1 || len(rb.Choices) != 1 ||
		ra.Choices[0].Text != rb.Choices[0].Text || ra.Usage.PromptTokens != rb.Usage.PromptTokens {
		t.Errorf("text prompt %s, token-id prompt %s: want the same completion", a, b)
	}
}

// TestPrefixCacheOverHTTP: a second chat with the same long system
// prompt reports cached prompt tokens in its usage and in the metrics,
// and answers as the first did; /reset_prefix_cache empties the cache.
func TestPrefixCacheOverHTTP(t *testing.T) {
	ts, _ := newServer(t, 8)
	sys := strings.Repeat("You are careful. ", 6)
	body := fmt.Sprintf(`{"messages":[{"role":"system","content":%q},{"role":"user","content":"hi"}],"max_tokens":4,"temperature":0}`, sys)
	chat := func() chatResponse {
		t.Helper()
		resp, b := post(t, ts.URL+"/v1/chat/completions", body)
		var cr chatResponse
		if err := json.Unmarshal(b, &cr); resp.StatusCode != 200 || err != nil || cr.Usage == nil || cr.Usage.PromptTokensDetails == nil {
			t.Fatalf("chat: %d %s", resp.StatusCode, b)
		}
		return cr
	}
	a := chat()
	b := chat()
	if a.Usage.PromptTokensDetails.CachedTokens != 0 || b.Usage.PromptTokensDetails.CachedTokens < a.Usage.PromptTokens/2 {
		t.Errorf("cached tokens %d then %d of %d", a.Usage.PromptTokensDetails.CachedTokens, b.Usage.PromptTokensDetails.CachedTokens, a.Usage.PromptTokens)
	}
	if a.Choices[0].Message.Content != b.Choices[0].Message.Content {
		t.Errorf("answers differ: %q then %q", a.Choices[0].Message.Content, b.Choices[0].Message.Content)
	}
	m := scrape(t, ts.URL)
	if h := m["vllm:prefix_cache_hits_total"+lbl]; h != float64(b.Usage.PromptTokensDetails.CachedTokens) {
		t.Errorf("prefix_cache_hits_total %v, want %d", h, b.Usage.PromptTokensDetails.CachedTokens)
	}
	if q := m["vllm:prefix_cache_queries_total"+lbl]; q != float64(2*a.Usage.PromptTokens) {
		t.Errorf("prefix_cache_queries_total %v, want %d", q, 2*a.Usage.PromptTokens)
	}
	if resp, b := post(t, ts.URL+"/reset_prefix_cache", ""); resp.StatusCode != 200 {
		t.Fatalf("/reset_prefix_cache: %d %s", resp.StatusCode, b)
	}
	if c := chat(); c.Usage.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("after reset: %d cached", c.Usage.PromptTokensDetails.CachedTokens)
	}
}
