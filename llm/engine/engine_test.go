package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/llm/safetensors"
	"github.com/gokern/kern/llm/sample"
	"github.com/gokern/kern/llm/tokenizer"
)

func open(t *testing.T, dev *kern.Device, variant string) *Engine {
	t.Helper()
	e, err := Open(dev, fixture.Model(t, variant), Options{TokenizerDir: fixture.Tokenizer(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// TestGreedyMatchesReference: Generate's greedy tokens are transformers'.
func TestGreedyMatchesReference(t *testing.T) {
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		t.Run(dev.Kind(), func(t *testing.T) {
			e := open(t, dev, "tiny-qwen3-untied")
			f, err := safetensors.Open(fixture.Model(t, "tiny-qwen3-untied") + "/reference.safetensors")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, _ := f.Tensor("prompt_ids").Int64()
			g, _ := f.Tensor("generated_ids").Int64()
			var prompt []int32
			for _, x := range p {
				prompt = append(prompt, int32(x))
			}
			var streamed []int32
			res, err := e.Generate(context.Background(), Request{Prompt: prompt, MaxTokens: len(g), OnToken: func(id int32) { streamed = append(streamed, id) }})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tokens) != len(g) || res.FinishReason != "length" || res.PromptTokens != len(prompt) {
				t.Fatalf("tokens %v finish %q, want %d tokens and length", res.Tokens, res.FinishReason, len(g))
			}
			for i := range g {
				if res.Tokens[i] != int32(g[i]) || streamed[i] != res.Tokens[i] {
					t.Fatalf("token %d = %d (streamed %d), want %d", i, res.Tokens[i], streamed[i], g[i])
				}
			}
			if res.Text != e.Tok.Decode(res.Tokens, true) {
				t.Errorf("text %q, want the decode of the tokens %q", res.Text, e.Tok.Decode(res.Tokens, true))
			}
		})
	}
}

// TestSeededSampling: the same seed reproduces a sampled continuation;
// streamed text concatenates to the result's text.
func TestSeededSampling(t *testing.T) {
	e := open(t, kern.OpenEmulator(), "tiny-qwen3-tied")
	prompt := e.ChatPrompt([]tokenizer.Message{{Role: "user", Content: "hello world"}}, false)
	run := func(seed uint64) *Result {
		var b strings.Builder
		res, err := e.Generate(context.Background(), Request{Prompt: prompt, MaxTokens: 8,
			Sampling: sample.Params{Temperature: 1, TopK: 50, TopP: 0.95, MinP: 0.01, RepetitionPenalty: 1.1, Seed: seed},
			OnText:   func(s string) error { b.WriteString(s); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != res.Text {
			t.Errorf("streamed %q, result %q", b.String(), res.Text)
		}
		return res
	}
	a, b := run(42), run(42)
	if len(a.Tokens) != len(b.Tokens) {
		t.Fatalf("same seed: %v vs %v", a.Tokens, b.Tokens)
	}
	for i := range a.Tokens {
		if a.Tokens[i] != b.Tokens[i] {
			t.Fatalf("same seed: %v vs %v", a.Tokens, b.Tokens)
		}
	}
}

func TestErrors(t *testing.T) {
	e := open(t, kern.OpenNative(), "tiny-qwen3-tied")
	long := make([]int32, e.Context)
	if _, err := e.Generate(context.Background(), Request{Prompt: long}); !errors.Is(err, ErrContext) {
		t.Errorf("long prompt: %v", err)
	}
	if _, err := e.Generate(context.Background(), Request{Prompt: []int32{1}, Sampling: sample.Params{TopP: 2}}); err == nil {
		t.Error("top_p 2: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Generate(ctx, Request{Prompt: []int32{1, 2}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	stop := errors.New("client gone")
	if _, err := e.Generate(context.Background(), Request{Prompt: []int32{5, 6}, MaxTokens: 50,
		OnText: func(string) error { return stop }}); err != nil && !errors.Is(err, stop) {
		t.Errorf("OnText error: %v", err)
	}
}

func TestStopWriter(t *testing.T) {
	cases := []struct {
		pieces []string
		stops  []string
		want   string
		stop   bool
	}{
		{[]string{"hello ", "wor", "ld"}, []string{"world"}, "hello ", true},
		{[]string{"ab", "c<", "/s", ">tail"}, []string{"</s>"}, "abc", true},
		{[]string{"ab", "c<", "x"}, []string{"</s>"}, "abc<x", false},
		{[]string{"END"}, []string{"E", "END"}, "", true},
		{[]string{"no stop here"}, nil, "no stop here", false},
		{[]string{"x</", "s"}, []string{"</s>"}, "x</s", false}, // flushed at the end
	}
	for _, c := range cases {
		var streamed strings.Builder
		w := newStopWriter(c.stops, func(s string) error { streamed.WriteString(s); return nil })
		stopped := false
		for _, p := range c.pieces {
			if s, _ := w.write(p); s {
				stopped = true
				break
			}
		}
		w.flush()
		if w.text.String() != c.want || streamed.String() != c.want || stopped != c.stop {
			t.Errorf("%q stops %q: text %q streamed %q stopped %v, want %q %v", c.pieces, c.stops, w.text.String(), streamed.String(), stopped, c.want, c.stop)
		}
	}
}

// TestBatchedRequestsMatchSolo: six concurrent sampled requests are
// batched (one step holds several) and each gets exactly the tokens it
// gets alone, on the float32 path and on the ops path.
func TestBatchedRequestsMatchSolo(t *testing.T) {
	for _, ops := range []bool{false, true} {
		t.Run(fmt.Sprintf("ops=%v", ops), func(t *testing.T) {
			e, err := Open(kern.OpenEmulator(), fixture.Model(t, "tiny-qwen3-hd32"), Options{TokenizerDir: fixture.Tokenizer(t), Ops: ops})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			testBatchedRequestsMatchSolo(t, e)
		})
	}
}

func testBatchedRequestsMatchSolo(t *testing.T, e *Engine) {
	const n = 6
	req := func(i int) Request {
		return Request{Prompt: e.Tok.Encode(strings.Repeat("hello world ", i+1)), MaxTokens: 2 + i%3,
			Sampling: sample.Params{Temperature: 0.9, TopK: 20, Seed: uint64(i)}}
	}
	solo := make([]*Result, n)
	for i := range solo {
		var err error
		if solo[i], err = e.Generate(context.Background(), req(i)); err != nil {
			t.Fatal(err)
		}
	}
	if e.Stats().MaxBatch != 1 {
		t.Fatalf("solo runs batched: %+v", e.Stats())
	}
	got := make([]*Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i], errs[i] = e.Generate(context.Background(), req(i))
		}()
	}
	close(start)
	wg.Wait()
	for i := range got {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		if fmt.Sprint(got[i].Tokens) != fmt.Sprint(solo[i].Tokens) || got[i].Text != solo[i].Text {
			t.Errorf("request %d: batched %v %q, solo %v %q", i, got[i].Tokens, got[i].Text, solo[i].Tokens, solo[i].Text)
		}
	}
	if st := e.Stats(); st.MaxBatch < 2 || st.Running != 0 || st.Waiting != 0 {
		t.Errorf("stats %+v: want a batch of ≥ 2 and nothing left", st)
	}
}

// TestChunkedPrefill: a prompt prefilled 3 tokens a step gives exactly
// the tokens of a prompt prefilled at once.
func TestChunkedPrefill(t *testing.T) {
	dev := kern.OpenEmulator()
	dir, tok := fixture.Model(t, "tiny-qwen3-untied"), fixture.Tokenizer(t)
	run := func(chunk int) (*Result, Stats) {
		e, err := Open(dev, dir, Options{TokenizerDir: tok, PrefillChunk: chunk})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		res, err := e.Generate(context.Background(), Request{Prompt: e.Tok.Encode("the quick brown fox jumps over"), MaxTokens: 3})
		if err != nil {
			t.Fatal(err)
		}
		return res, e.Stats()
	}
	whole, ws := run(0)
	chunked, cs := run(3)
	if fmt.Sprint(whole.Tokens) != fmt.Sprint(chunked.Tokens) {
		t.Errorf("chunked prefill %v, whole %v", chunked.Tokens, whole.Tokens)
	}
	if want := ws.Steps + int64((whole.PromptTokens+2)/3) - 1; cs.Steps != want {
		t.Errorf("chunked run took %d steps, want %d (prompt of %d)", cs.Steps, want, whole.PromptTokens)
	}
}

// TestGreedyOnOps: with Options.Ops (the forward pass on package ops,
// decode graphs on), and with Options.OpsMatmul (the float32 path's
// projections on ops.Matmul), Generate still gives transformers' greedy tokens on
// the tiny model (its smallest top-1 margin, 0.17, is well above the
// bf16 path's logit error; llm/qwen3's ops tests bound it stage by stage).
func TestGreedyOnOps(t *testing.T) {
	for _, opt := range []Options{{Ops: true}, {OpsMatmul: true}, {Ops: true, PersistentDecode: true}} {
		t.Run(fmt.Sprintf("ops=%v,opsmatmul=%v,persistent=%v", opt.Ops, opt.OpsMatmul, opt.PersistentDecode), func(t *testing.T) { greedyOnOps(t, opt) })
	}
	// The persistent layer runs on the ops path only.
	_, err := Open(kern.OpenEmulator(), fixture.Model(t, "tiny-qwen3-untied"), Options{TokenizerDir: fixture.Tokenizer(t), PersistentDecode: true})
	if err == nil || !strings.Contains(err.Error(), "PersistentDecode") {
		t.Errorf("PersistentDecode without Ops: %v", err)
	}
}

func greedyOnOps(t *testing.T, opt Options) {
	dir := fixture.Model(t, "tiny-qwen3-untied")
	opt.TokenizerDir = fixture.Tokenizer(t)
	e, err := Open(kern.OpenEmulator(), dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	f, err := safetensors.Open(dir + "/reference.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, _ := f.Tensor("prompt_ids").Int64()
	g, _ := f.Tensor("generated_ids").Int64()
	var prompt []int32
	for _, x := range p {
		prompt = append(prompt, int32(x))
	}
	res, err := e.Generate(context.Background(), Request{Prompt: prompt, MaxTokens: len(g)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range g {
		if i >= len(res.Tokens) || res.Tokens[i] != int32(g[i]) {
			t.Fatalf("tokens %v, want %v", res.Tokens, g)
		}
	}
	m := e.Model.(Single).M
	if opt.Ops && (!m.UsingOps() || m.GraphReplays() == 0) {
		t.Errorf("ops %v, graph replays %d: want the ops path with replayed decode steps", m.UsingOps(), m.GraphReplays())
	}
	if m.UsingPersistentDecode() != opt.PersistentDecode {
		t.Errorf("persistent decode %v, want %v", m.UsingPersistentDecode(), opt.PersistentDecode)
	}
	if _, ok := m.Matmul.(*qwen3.OpsMatmul); opt.OpsMatmul && !ok {
		t.Errorf("Matmul is %T, want *qwen3.OpsMatmul", m.Matmul)
	}
}

// TestOpsWhereFast: the emulator is not where the ops path is the fast
// one, so OpsWhereFast keeps the float32 path there (on a GPU the gpu
// tests open the engine with it).
func TestOpsWhereFast(t *testing.T) {
	e, err := Open(kern.OpenEmulator(), fixture.Model(t, "tiny-qwen3-hd32"), Options{TokenizerDir: fixture.Tokenizer(t), OpsWhereFast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Model.(Single).M.UsingOps() {
		t.Error("OpsWhereFast on the emulator: the ops path")
	}
}
