package server

// /metrics: Prometheus's text exposition format (version 0.0.4), written
// by hand. The engine's gauges, counters and histograms carry vLLM's
// names and a model_name label, so the inference gateways (llm-d's
// scheduler, the Gateway API Inference Extension's endpoint picker) and
// vLLM dashboards read them unchanged; kern's own counters are kern_*.
// docs/serving.md says what each one means.

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gokern/kern/llm/engine"
)

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	lbl := `model_name="` + escapeLabel(s.ModelName) + `"`
	e := s.engine()
	if e != nil {
		st := e.Stats()
		m := e.Metrics
		for _, g := range []struct {
			name, kind, help string
			v                float64
		}{
			{"vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", float64(st.Running)},
			{"vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", float64(st.Waiting)},
			{"vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", st.KVUsage},
			{"vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", float64(m.PromptTokens.Load())},
			{"vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", float64(m.GenerationTokens.Load())},
			{"vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", float64(m.PrefixQueries.Load())},
			{"vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", float64(m.PrefixHits.Load())},
		} {
			fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s{%s} %s\n", g.name, g.help, g.name, g.kind, g.name, lbl, num(g.v))
		}
		const succ = "vllm:request_success_total"
		fmt.Fprintf(w, "# HELP %s Count of successfully processed requests.\n# TYPE %s counter\n", succ, succ)
		fmt.Fprintf(w, "%s{%s,finished_reason=\"stop\"} %d\n", succ, lbl, m.FinishedStop.Load())
		fmt.Fprintf(w, "%s{%s,finished_reason=\"length\"} %d\n", succ, lbl, m.FinishedLength.Load())
		for _, h := range []struct {
			name, help string
			h          *engine.Histogram
		}{
			{"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", m.TTFT},
			{"vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", m.ITL},
			{"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", m.E2E},
			{"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", m.QueueTime},
			{"vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", m.Prefill},
			{"vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", m.Decode},
		} {
			writeHistogram(w, h.name, h.help, lbl, h.h.Snapshot())
		}
		fmt.Fprintf(w, "# HELP kern_engine_steps_total Batched forward passes.\n# TYPE kern_engine_steps_total counter\nkern_engine_steps_total{%s} %d\n", lbl, st.Steps)
	}
	for _, c := range []struct {
		name, help string
		v          int64
	}{
		{"kern_requests_total", "Completion requests received.", s.m.requests.Load()},
		{"kern_requests_rejected_total", "Requests refused with 429 (queue full).", s.m.rejected.Load()},
		{"kern_requests_failed_total", "Requests that ended in an error.", s.m.failed.Load()},
		{"kern_requests_cancelled_total", "Requests whose client went away.", s.m.cancelled.Load()},
	} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s{%s} %d\n", c.name, c.help, c.name, c.name, lbl, c.v)
	}
}

// writeHistogram writes one histogram: cumulative _bucket lines with an
// le label ending at +Inf, then _sum and _count.
func writeHistogram(w io.Writer, name, help, lbl string, h engine.HistogramSnapshot) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	for i, b := range h.Bounds {
		fmt.Fprintf(w, "%s_bucket{%s,le=\"%s\"} %d\n", name, lbl, num(b), h.Counts[i])
	}
	fmt.Fprintf(w, "%s_bucket{%s,le=\"+Inf\"} %d\n", name, lbl, h.Count)
	fmt.Fprintf(w, "%s_sum{%s} %s\n%s_count{%s} %d\n", name, lbl, num(h.Sum), name, lbl, h.Count)
}

// num formats a sample value as Prometheus's parsers read it.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// escapeLabel escapes a label value (backslash, quote, newline).
func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
