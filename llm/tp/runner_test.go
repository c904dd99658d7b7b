package tp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/engine"
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/llm/tokenizer"
)

// TestRunnerUnderTheEngine: the engine over a TP=2 Runner generates what
// it generates over the whole model, for requests batched together, one
// of them asking for prompt logprobs (the all-rows pass the other ranks
// replay too), and again with the prefix cache warm.
func TestRunnerUnderTheEngine(t *testing.T) {
	dir := fixture.Model(t, "tiny-qwen3-untied")
	tok, err := tokenizer.Load(fixture.Tokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	reqs := []engine.Request{
		{Prompt: []int32{3, 141, 59, 265, 358, 979, 32, 38, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, MaxTokens: 5},
		{Prompt: []int32{7, 7, 100, 5}, MaxTokens: 4, PromptLogprobs: true},
		{Prompt: []int32{3, 141, 59, 265, 358, 979, 32, 38, 1, 2, 3, 4, 5, 6, 7, 8, 11}, MaxTokens: 3},
	}
	generate := func(e *engine.Engine) []*engine.Result {
		out := make([]*engine.Result, len(reqs))
		errs := make([]error, len(reqs))
		var wg sync.WaitGroup
		for i, r := range reqs {
			wg.Add(1)
			go func() { defer wg.Done(); out[i], errs[i] = e.Generate(context.Background(), r) }()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	one, err := engine.Open(kern.OpenEmulator(), dir, engine.Options{TokenizerDir: fixture.Tokenizer(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := generate(one)
	one.Close()

	m, err := LoadLocal([]*kern.Device{kern.OpenEmulator(), kern.OpenEmulator()}, dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.NewRunner(m.Runner(), m.Config, m.Shards[0].Gen, tok, engine.Options{})
	if err != nil {
		m.Free()
		t.Fatal(err)
	}
	defer e.Close()
	for round := range 2 {
		got := generate(e)
		for i := range reqs {
			if fmt.Sprint(got[i].Tokens) != fmt.Sprint(want[i].Tokens) {
				t.Errorf("round %d request %d: TP=2 %v, TP=1 %v", round, i, got[i].Tokens, want[i].Tokens)
			}
			for k, lp := range got[i].PromptLogprobs {
				if d := lp.Logprob - want[i].PromptLogprobs[k].Logprob; d > 1e-3 || d < -1e-3 || lp.Token != want[i].PromptLogprobs[k].Token {
					t.Errorf("round %d request %d prompt position %d: %+v, TP=1 %+v", round, i, k+1, lp.TokenLogprob, want[i].PromptLogprobs[k].TokenLogprob)
				}
			}
		}
		if round == 1 && got[0].CachedTokens == 0 && got[2].CachedTokens == 0 {
			t.Error("the second round found nothing in the prefix cache")
		}
	}
}

// A plan whose sequence lacks pages for its tokens is refused, not run
// with pages the rank would take for itself.
func TestPlanNeedsItsPages(t *testing.T) {
	m, err := qwen3.NewRandom(kern.OpenEmulator(), qwen3.Presets["tiny"], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	pool, err := m.NewKVPool(4, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Free()
	p := Plan{Seqs: []PlanSeq{{Pages: []int32{2}, Len: 15, Tokens: []int32{1, 2}}}}
	if _, err := p.Replay(m, pool); err == nil || !strings.Contains(err.Error(), "17 positions in 1 pages") {
		t.Errorf("replay without pages: %v", err)
	}
	if pool.FreePages() != 4 {
		t.Errorf("the refused replay left %d of 4 pages free", pool.FreePages())
	}
}
