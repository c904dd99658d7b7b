package engine

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/sample"
)

// TestCandidatesMatchWholeRows: requests drawn from each row's largest
// logits on the device (ops.TopK, then sample.Sampler.NextFrom) get the
// tokens of the same requests drawn from the whole rows, batched
// together, greedy or sampled, with a repetition penalty that sends some
// draws back to the whole row, and with logprobs (from the candidates and
// the row's log-sum-exp: the same ranks and alternatives, the same values
// to 1e-12).
func TestCandidatesMatchWholeRows(t *testing.T) {
	for _, ops := range []bool{false, true} {
		t.Run(fmt.Sprintf("ops=%v", ops), func(t *testing.T) {
			testCandidatesMatchWholeRows(t, func() *kern.Device { return kern.OpenEmulator() }, Options{Ops: ops})
		})
	}
}

// TestCandidatesPickedInStep: on the ops path the decode steps pick the
// candidates themselves, in their graphs; the engine picks its own only
// after a prefill (the first token of each request).
func TestCandidatesPickedInStep(t *testing.T) {
	e, err := Open(kern.OpenEmulator(), fixture.Model(t, "tiny-qwen3-tied"), Options{TokenizerDir: fixture.Tokenizer(t), Ops: true, SampleCandidates: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, p := range []sample.Params{{}, {Temperature: 0.7, TopK: 10, Seed: 2}} {
		if _, err := e.Generate(context.Background(), Request{Prompt: e.Tok.Encode("the cat sat"), MaxTokens: 6, Sampling: p}); err != nil {
			t.Fatal(err)
		}
	}
	m := e.Model.(Single).M
	if st := e.Stats(); st.CandidateDraws != 12 || st.WholeRows != 0 || e.stats.stepPicks.Load() != 10 || m.GraphReplays() == 0 {
		t.Errorf("%d draws from candidates, %d whole-row steps, %d picked in the step, %d graph launches; want 12, 0, 10 (all but each request's first token), some",
			st.CandidateDraws, st.WholeRows, e.stats.stepPicks.Load(), m.GraphReplays())
	}
}

// testCandidatesMatchWholeRows runs the requests on engines over devices
// open makes, with opt besides the candidates.
func testCandidatesMatchWholeRows(t *testing.T, open func() *kern.Device, opt Options) {
	reqs := []Request{
		{MaxTokens: 6},
		{MaxTokens: 7, Sampling: sample.Params{Temperature: 0.6, TopK: 20, TopP: 0.95, Seed: 3}},
		{MaxTokens: 9, Sampling: sample.Params{Temperature: 1.2, TopK: 12, MinP: 0.02, RepetitionPenalty: 1.5, Seed: 4}},
		{MaxTokens: 5, Sampling: sample.Params{Temperature: 0.8, TopP: 0.9, Seed: 5}},
		{MaxTokens: 4, Sampling: sample.Params{Temperature: 0.7, TopK: 5, Seed: 6}, Logprobs: true, TopLogprobs: 2},
	}
	run := func(candidates int, batched bool) ([]*Result, Stats) {
		o := opt
		o.TokenizerDir, o.SampleCandidates = fixture.Tokenizer(t), candidates
		e, err := Open(open(), fixture.Model(t, "tiny-qwen3-tied"), o)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		out := make([]*Result, len(reqs))
		errs := make([]error, len(reqs))
		var wg sync.WaitGroup
		for i, r := range reqs {
			r.Prompt = e.Tok.Encode(strings.Repeat("the cat sat ", i+2))
			if !batched {
				out[i], errs[i] = e.Generate(context.Background(), r)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i], errs[i] = e.Generate(context.Background(), r)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		}
		return out, e.Stats()
	}
	whole, ws := run(-1, false)
	if ws.CandidateDraws != 0 {
		t.Errorf("SampleCandidates -1: %d draws from candidates", ws.CandidateDraws)
	}
	for _, batched := range []bool{false, true} {
		got, st := run(16, batched)
		for i := range reqs {
			if fmt.Sprint(got[i].Tokens) != fmt.Sprint(whole[i].Tokens) {
				t.Errorf("batched=%v, request %d: %v from candidates, %v from whole rows", batched, i, got[i].Tokens, whole[i].Tokens)
			}
			if len(got[i].Logprobs) != len(whole[i].Logprobs) {
				t.Fatalf("batched=%v, request %d: %d logprobs, want %d", batched, i, len(got[i].Logprobs), len(whole[i].Logprobs))
			}
			for n, lp := range got[i].Logprobs {
				if err := sameLogprob(lp, whole[i].Logprobs[n]); err != nil {
					t.Errorf("batched=%v, request %d, token %d: %v", batched, i, n, err)
				}
			}
		}
		if !batched && (st.CandidateDraws < 17 || st.WholeRows == 0) {
			t.Errorf("solo runs: %d draws from candidates and %d whole-row steps; want greedy's, Qwen3's config's and logprobs' 17 at least, and the penalty's and top-p's steps whole", st.CandidateDraws, st.WholeRows)
		}
	}
}

// sameLogprob compares a logprob taken from candidates with one taken
// from the whole row: the same tokens and ranks, values within 1e-12.
func sameLogprob(got, want SampledLogprob) error {
	close := func(a, b float64) bool { return a == b || math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }
	if got.Token != want.Token || got.Rank != want.Rank || !close(got.Logprob, want.Logprob) || len(got.Top) != len(want.Top) {
		return fmt.Errorf("%+v, want %+v", got, want)
	}
	for i := range got.Top {
		if got.Top[i].Token != want.Top[i].Token || !close(got.Top[i].Logprob, want.Top[i].Logprob) {
			return fmt.Errorf("alternative %d: %+v, want %+v", i, got.Top[i], want.Top[i])
		}
	}
	return nil
}
