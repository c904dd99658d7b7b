package engine

// The engine's request metrics, kept where the events happen (the
// scheduler goroutine) so that they move as requests queue, run and
// finish rather than when a client reads its answer. The server exposes
// them in Prometheus's text format under vLLM's names (docs/serving.md).

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Histogram counts observations into cumulative buckets, as a Prometheus
// histogram: Counts[i] is the observations ≤ Bounds[i], and Count and Sum
// cover all of them (the +Inf bucket is Count).
type Histogram struct {
	mu     sync.Mutex
	bounds []float64
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
}

// NewHistogram makes a histogram with the given increasing upper bounds.
func NewHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// Observe adds one observation.
func (h *Histogram) Observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.mu.Unlock()
}

// HistogramSnapshot is a histogram's state at one moment.
type HistogramSnapshot struct {
	Bounds []float64
	Counts []uint64 // cumulative: Counts[i] observations ≤ Bounds[i]
	Count  uint64
	Sum    float64
}

// Snapshot returns the cumulative counts now.
func (h *Histogram) Snapshot() HistogramSnapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := HistogramSnapshot{Bounds: h.bounds, Counts: make([]uint64, len(h.bounds)), Sum: h.sum}
	var c uint64
	for i := range h.bounds {
		c += h.counts[i]
		s.Counts[i] = c
	}
	s.Count = c + h.counts[len(h.bounds)]
	return s
}

// vLLM's bucket bounds (vllm/v1/metrics/loggers.py), so dashboards and
// the inference gateways' latency estimates read kern's histograms as
// they read vLLM's.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	requestBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
		40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

// Metrics are the engine's request counters and latency histograms.
type Metrics struct {
	PromptTokens     atomic.Int64 // prompt tokens of admitted requests (cached ones included)
	GenerationTokens atomic.Int64 // tokens sampled
	// PrefixQueries and PrefixHits count prompt tokens looked up in the
	// prefix cache and found there.
	PrefixQueries, PrefixHits atomic.Int64
	// Finished counts requests that ended normally, by finish reason
	// ("stop", "length"); Aborted those that ended with an error or a
	// client that went away.
	FinishedStop, FinishedLength, Aborted atomic.Int64

	TTFT      *Histogram // arrival to first token, seconds
	ITL       *Histogram // between consecutive tokens of a request, seconds
	E2E       *Histogram // arrival to last token, seconds
	QueueTime *Histogram // arrival to admission into the batch, seconds
	Prefill   *Histogram // admission to first token, seconds
	Decode    *Histogram // first token to last token, seconds
}

func newMetrics() *Metrics {
	return &Metrics{TTFT: NewHistogram(ttftBuckets), ITL: NewHistogram(itlBuckets),
		E2E: NewHistogram(requestBuckets), QueueTime: NewHistogram(requestBuckets),
		Prefill: NewHistogram(requestBuckets), Decode: NewHistogram(requestBuckets)}
}

func seconds(d time.Duration) float64 { return math.Max(d.Seconds(), 0) }
