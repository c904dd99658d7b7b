package engine

// The scheduler: one goroutine steps every request in flight together.
// Each iteration admits waiting requests (first come, first served) while
// the batch has room and the KV pool can hold their prompt plus
// max_tokens, then runs one ForwardBatch in which new requests prefill
// their prompts, PrefillChunk tokens a step (so a long prompt neither
// stalls the others' decoding nor needs activations for all its rows at
// once), and running ones decode one token, samples each row with
// its request's own seeded sampler, and hands text to the request's
// goroutine through a channel sized to hold everything it can produce
// (two events per token, two at the end, one for prompt logprobs), so a
// slow client never stalls the batch. A request whose context ends (its
// client went away) leaves the batch at the next iteration and its pages
// go back to the pool.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/llm/sample"
	"github.com/gokern/kern/llm/tokenizer"
)

// job is one request in the scheduler.
type job struct {
	ctx       context.Context
	prompt    []int32
	budget    int
	smp       *sample.Sampler
	stops     []string
	logprobs  bool
	top       int
	promptLP  bool // prompt logprobs: prefilled alone, every row's logits (prompt.go)
	promptTop int
	events    chan event // closed when the job ends
	submitted time.Time

	seq     *qwen3.Seq
	held    []*cblock // prefix-cache blocks seq shares
	seen    []int32
	next    []int32 // the next step's input: a chunk of the prompt, then the last token
	rest    []int32 // the prompt not yet prefilled
	stream  *tokenizer.Stream
	out     *stopWriter
	started time.Time
	first   time.Time
	last    time.Time // when the latest token was sampled
	res     *Result
	err     error
}

type event struct {
	tok  int32 // -1 for text only
	lp   *SampledLogprob
	plp  []SampledLogprob // the prompt logprobs (prompt.go), once
	text string
}

func (e *Engine) schedule() {
	defer close(e.done)
	var waiting, active []*job
	finish := func(j *job, err error) {
		if j.seq != nil {
			e.prefix.release(j.seq, j.held, j.seen)
			j.seq, j.held = nil, nil
		}
		if j.res != nil {
			if !j.first.IsZero() {
				j.res.Decode = time.Since(j.first)
			}
			j.res.Text = j.out.text.String()
		}
		e.observeEnd(j, err)
		j.err = err
		close(j.events)
	}
	defer func() {
		for _, j := range append(waiting, active...) {
			finish(j, ErrClosed)
		}
		e.stats.running.Store(0)
		e.stats.waiting.Store(0)
	}()
	logits := []float32{}
	for {
		if len(waiting) == 0 && len(active) == 0 {
			select {
			case j := <-e.jobs:
				waiting = append(waiting, j)
			case <-e.quit:
				return
			}
		}
	drain:
		for {
			select {
			case j := <-e.jobs:
				waiting = append(waiting, j)
			case <-e.quit:
				return
			default:
				break drain
			}
		}
		// Requests whose client is gone leave now, waiting or not.
		keep := waiting[:0]
		for _, j := range waiting {
			if err := j.ctx.Err(); err != nil {
				finish(j, err)
			} else {
				keep = append(keep, j)
			}
		}
		waiting = keep
		keepA := active[:0]
		for _, j := range active {
			if err := j.ctx.Err(); err != nil {
				finish(j, err)
			} else {
				keepA = append(keepA, j)
			}
		}
		active = keepA
		for len(waiting) > 0 && len(active) < e.MaxBatch {
			j := waiting[0]
			seq, held, hit, err := e.prefix.admit(j.prompt, len(j.prompt)+j.budget, !j.promptLP)
			if err != nil {
				if errors.Is(err, qwen3.ErrPoolFull) && len(active) > 0 {
					break // wait for pages to come back
				}
				waiting = waiting[1:]
				finish(j, fmt.Errorf("engine: %w", err))
				continue
			}
			waiting = waiting[1:]
			j.seq, j.held = seq, held
			j.seen = append([]int32(nil), j.prompt...)
			todo := j.prompt[hit:] // the cached blocks' KV is in place
			j.next, j.rest = todo, nil
			if c := e.PrefillChunk; len(todo) > c {
				j.next, j.rest = todo[:c], todo[c:]
			}
			e.Metrics.PrefixQueries.Add(int64(len(j.prompt)))
			e.Metrics.PrefixHits.Add(int64(hit))
			j.stream = e.Tok.NewStream(true)
			j.out = newStopWriter(j.stops, func(s string) error { j.events <- event{tok: -1, text: s}; return nil })
			j.started = time.Now()
			j.res = &Result{PromptTokens: len(j.prompt), FinishReason: "length", Queued: j.started.Sub(j.submitted), CachedTokens: hit}
			e.Metrics.QueueTime.Observe(seconds(j.res.Queued))
			e.Metrics.PromptTokens.Add(int64(len(j.prompt)))
			if j.promptLP {
				// Prefilled now, alone, keeping every row's logits.
				if done, err := e.prefillAll(j); err != nil || done {
					finish(j, err)
					continue
				}
			}
			active = append(active, j)
		}
		e.stats.running.Store(int64(len(active)))
		e.stats.waiting.Store(int64(len(waiting)))
		if len(active) == 0 {
			continue
		}
		e.stats.steps.Add(1)
		if int64(len(active)) > e.stats.maxBatch.Load() {
			e.stats.maxBatch.Store(int64(len(active)))
		}
		seqs := make([]*qwen3.Seq, len(active))
		inputs := make([][]int32, len(active))
		for i, j := range active {
			seqs[i], inputs[i] = j.seq, j.next
			e.stats.forwarded.Add(int64(len(j.next)))
		}
		out, err := e.forward(seqs, inputs, false)
		var p picked
		if err == nil {
			V := e.Config.VocabSize
			if len(logits) != len(active)*V {
				logits = make([]float32, len(active)*V)
			}
			switch c, lse := e.candidates(out, active); {
			case c < 0: // every job mid-prompt: no logits wanted
				p.toks = make([]int32, len(active))
			case c > 0:
				p, err = e.pickFromCandidates(out, active, c, lse, logits)
			default:
				e.stats.wholeRows.Add(1)
				if err = out.CopyTo(logits); err == nil {
					p = picked{toks: e.sampleAll(active, logits), whole: true}
				}
			}
		}
		if err != nil {
			for _, j := range active {
				finish(j, fmt.Errorf("engine: %w", err))
			}
			active = active[:0]
			continue
		}
		keepA = active[:0]
		for i, j := range active {
			var row []float32 // only logprobs read it, where the candidates did not give them
			if p.whole {
				row = logits[i*e.Config.VocabSize : (i+1)*e.Config.VocabSize]
			}
			var lp *SampledLogprob
			if p.lps != nil {
				lp = p.lps[i]
			}
			if done := e.advance(j, row, p.toks[i], lp); done {
				finish(j, nil)
			} else {
				keepA = append(keepA, j)
			}
		}
		active = keepA
		e.stats.running.Store(int64(len(active)))
	}
}

// sampleAll draws the next token of every job that samples this step
// (-1 for a job mid-prompt), the jobs side by side: a draw is about a
// millisecond of CPU at a 150k vocabulary, so a batch drawn one by one
// would outlast the GPU's step. Each job's sampler and row of logits are
// its own, so the tokens do not depend on the order.
func (e *Engine) sampleAll(active []*job, logits []float32) []int32 {
	V := e.Config.VocabSize
	toks := make([]int32, len(active))
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, j := range active {
		toks[i] = -1
		if len(j.rest) > 0 {
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			toks[i] = j.smp.Next(logits[i*V:(i+1)*V], j.seen)
			<-slots
		}()
	}
	wg.Wait()
	return toks
}

// advance passes on j's next token tok (sampleAll's); lp, if not nil,
// is its logprobs taken from the step's candidates (candidates.go), else
// they come from logits. It reports whether j is finished.
func (e *Engine) advance(j *job, logits []float32, tok int32, lp *SampledLogprob) bool {
	if len(j.rest) > 0 { // mid-prompt: the logits are not wanted
		n := min(len(j.rest), e.PrefillChunk)
		j.next, j.rest = j.rest[:n], j.rest[n:]
		return false
	}
	res := j.res
	now := time.Now()
	if res.CompletionTokens == 0 {
		j.first = now
		res.Prefill = j.first.Sub(j.started)
		e.Metrics.TTFT.Observe(seconds(now.Sub(j.submitted)))
		e.Metrics.Prefill.Observe(seconds(res.Prefill))
	} else {
		e.Metrics.ITL.Observe(seconds(now.Sub(j.last)))
	}
	j.last = now
	e.Metrics.GenerationTokens.Add(1)
	res.Tokens = append(res.Tokens, tok)
	res.CompletionTokens++
	j.seen = append(j.seen, tok)
	j.next = []int32{tok}
	ev := event{tok: tok}
	if j.logprobs {
		if lp == nil {
			v := logprobs(logits, tok, j.top)
			lp = &v
		}
		res.Logprobs = append(res.Logprobs, *lp)
		ev.lp = lp
	}
	j.events <- ev
	stopped := false
	if e.EOS[tok] {
		stopped = true
	} else {
		stopped, _ = j.out.write(j.stream.Add(tok))
	}
	if stopped {
		res.FinishReason = "stop"
	}
	if stopped || res.CompletionTokens >= j.budget {
		if !j.out.stopped {
			j.out.write(j.stream.Flush())
			j.out.flush()
		}
		return true
	}
	return false
}

// observeEnd records a request's end in the metrics.
func (e *Engine) observeEnd(j *job, err error) {
	m := e.Metrics
	if err != nil || j.res == nil {
		m.Aborted.Add(1)
		return
	}
	m.E2E.Observe(seconds(time.Since(j.submitted)))
	if !j.first.IsZero() {
		m.Decode.Observe(seconds(j.last.Sub(j.first)))
	}
	if j.res.FinishReason == "stop" {
		m.FinishedStop.Add(1)
	} else {
		m.FinishedLength.Add(1)
	}
}
