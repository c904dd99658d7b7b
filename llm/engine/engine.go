// Package engine generates text with a Qwen3 model: tokenizer in, prefill,
// decode steps with a sampler, stop on EOS tokens or stop strings, text
// out as it is produced. The command (cmd/qwen3) and the server are thin
// layers over Engine.Generate.
//
// Concurrent Generate calls are batched continuously (scheduler.go): one
// goroutine steps every request in flight in one forward pass over a
// paged KV cache, new requests joining and finished ones leaving between
// steps.
package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/llm/sample"
	"github.com/gokern/kern/llm/tokenizer"
)

// Engine is a model, its tokenizer, a paged KV cache shared by the
// requests in flight, and the scheduler goroutine that steps them.
type Engine struct {
	// Model runs the forward passes: Single for a model on one device,
	// or a tensor-parallel one (llm/tp).
	Model  Runner
	Config *qwen3.Config           // the whole model's
	Gen    *qwen3.GenerationConfig // generation_config.json's defaults
	Tok    *tokenizer.Tokenizer
	// EOS are the tokens that end generation: config.json's and
	// generation_config.json's eos_token_id and the tokenizer's eos_token.
	EOS          map[int32]bool
	Context      int // positions per sequence (prompt + generated)
	MaxBatch     int // sequences stepped together
	PrefillChunk int // prompt tokens a sequence prefills per step
	// Metrics move as requests queue, run and finish (metrics.go).
	Metrics *Metrics

	pool   *qwen3.KVPool
	prefix *prefixCache
	// sampleCandidates is Options.SampleCandidates; cand the device's
	// candidates of the last step (candidates.go).
	sampleCandidates int
	cand             *kern.Buffer[uint64]
	stats            stats
	jobs             chan *job
	quit             chan struct{}
	done             chan struct{}
}

// Options tune Open.
type Options struct {
	// TokenizerDir holds tokenizer.json (default: the model directory).
	TokenizerDir string
	// Context caps the positions of a sequence; 0 means
	// min(max_position_embeddings, 4096).
	Context int
	// MaxBatch caps the sequences decoded together (default 16).
	MaxBatch int
	// PrefillChunk caps the prompt tokens a sequence prefills per step
	// (default 512).
	PrefillChunk int
	// KVPositions sizes the KV cache pool shared by the sequences in
	// flight (default 2·Context). A request reserves its prompt plus its
	// max_tokens when it starts, and waits while the pool cannot hold it.
	KVPositions int
	// NoPrefixCache turns prefix caching off (prefix.go): every request
	// prefills its whole prompt.
	NoPrefixCache bool
	// OnKVEvents, if set, receives the prefix cache's changes (blocks
	// stored, removed, all cleared) from the scheduler goroutine; it must
	// not block (kvevents.go publishes them).
	OnKVEvents func([]KVEvent)
	Progress   func(done, total int64)
	// Ops runs the forward pass on package ops (qwen3.Model.UseOps: bf16
	// or f16 activations and KV cache, tensor-core matmul and attention)
	// with decode steps replayed from graphs. It needs bf16 or f16
	// weights (not GGUF, which loads as float32), and gives up one
	// guarantee of the float32 path: logits within 2e-3 of an fp32
	// reference (see llm/qwen3/ops.go). A request's tokens are still
	// exactly those of a solo run whatever it is batched with (batch
	// invariance, llm/qwen3/ops.go).
	Ops bool
	// OpsWhereFast turns Ops on where it is the fast path and can run: a
	// GPU (a cuda device), the model on one device, weights all bf16 or
	// all f16 (qwen3.Model.OpsSupported). Elsewhere (the emulator, native
	// mode, GGUF, tensor parallelism) the float32 path runs. The qwen3
	// command's default.
	OpsWhereFast bool
	// OpsMatmul keeps the float32 path but runs its projections on
	// ops.Matmul over activations split into two 16-bit halves
	// (qwen3.OpsMatmul): float32 accuracy (the 2e-3 bound holds) on the
	// tensor cores, not batch-invariant. Ignored with Ops.
	OpsMatmul bool
	// PersistentDecode, with Ops, runs a decode step of up to 8
	// sequences as one persistent launch a layer
	// (qwen3.Model.UsePersistentDecode), a step of more as six launches a
	// layer. The two sum in different orders, so a request's tokens are
	// those of a solo run as long as every step it decodes in has at most
	// 8 sequences (fewer for a model whose inputs do not fit: 8 up to
	// Qwen3-8B on an H100).
	PersistentDecode bool
	// SampleCandidates is how many of each row's largest logits a decode
	// step hands the host (ops.TopKPacked) when every sequence sampling in
	// it draws greedily or with top-k (candidates.go); the tokens, and
	// logprobs, are those the whole rows give. 0: 64 on
	// a GPU (a cuda device), and the whole rows on the emulator and in
	// native mode, where they cost no copy; negative: always the whole
	// rows; at most ops.TopKMax.
	SampleCandidates int
}

// Open loads a model directory onto dev and starts the scheduler.
// A path ending in .gguf is a single-file GGUF model (Llama family).
func Open(dev *kern.Device, modelDir string, opt Options) (*Engine, error) {
	if strings.HasSuffix(modelDir, ".gguf") {
		return openGGUF(dev, modelDir, opt)
	}
	tokDir := opt.TokenizerDir
	if tokDir == "" {
		tokDir = modelDir
	}
	tok, err := tokenizer.Load(tokDir)
	if err != nil {
		return nil, err
	}
	m, err := qwen3.Load(dev, modelDir, qwen3.LoadOptions{Progress: opt.Progress})
	if err != nil {
		return nil, err
	}
	e, err := New(m, tok, opt)
	if err != nil {
		m.Free()
		return nil, err
	}
	return e, nil
}

// New starts an engine over a loaded model and tokenizer.
func New(m *qwen3.Model, tok *tokenizer.Tokenizer, opt Options) (*Engine, error) {
	return NewRunner(Single{m}, m.Config, m.Gen, tok, opt)
}

// NewRunner starts an engine over any Runner; cfg is the whole model's
// config (vocabulary, EOS, context) and gen its generation defaults
// (nil for none).
func NewRunner(m Runner, cfg *qwen3.Config, gen *qwen3.GenerationConfig, tok *tokenizer.Tokenizer, opt Options) (*Engine, error) {
	if gen == nil {
		gen = &qwen3.GenerationConfig{}
	}
	ctxLen := opt.Context
	if ctxLen <= 0 {
		ctxLen = 4096
		if mp := cfg.MaxPositionEmbeddings; mp > 0 {
			ctxLen = min(ctxLen, mp)
		}
	}
	batch := opt.MaxBatch
	if batch <= 0 {
		batch = 16
	}
	chunk := opt.PrefillChunk
	if chunk <= 0 {
		chunk = 512
	}
	kvPos := opt.KVPositions
	if kvPos <= 0 {
		kvPos = 2 * ctxLen
	}
	kvPos = max(kvPos, ctxLen)
	if s, ok := m.(Single); ok && opt.OpsWhereFast && !opt.Ops && !opt.OpsMatmul {
		opt.Ops = s.M.Device().Kind() == "cuda" && s.M.OpsSupported() == nil
	}
	if opt.Ops || opt.OpsMatmul {
		s, ok := m.(Single)
		if !ok {
			return nil, fmt.Errorf("engine: the ops forward pass (Options.Ops, Options.OpsMatmul) runs on one device only; %T splits the model", m)
		}
		if opt.OpsMatmul && !opt.Ops {
			if _, ok := s.M.Matmul.(*qwen3.OpsMatmul); !ok {
				s.M.Matmul = &qwen3.OpsMatmul{Fallback: s.M.Matmul}
			}
		}
		if opt.Ops && !s.M.UsingOps() {
			if err := s.M.UseOps(); err != nil {
				return nil, err
			}
			if err := s.M.EnableGraphs(); err != nil {
				return nil, err
			}
		}
	}
	if s, ok := m.(Single); ok {
		if err := pickInStep(s.M, opt); err != nil {
			return nil, err
		}
	}
	if opt.PersistentDecode {
		s, ok := m.(Single)
		if !ok || !opt.Ops {
			return nil, fmt.Errorf("engine: the persistent decode layer (Options.PersistentDecode) runs on the ops forward pass of one device")
		}
		if err := s.M.UsePersistentDecode(true); err != nil {
			return nil, err
		}
	}
	pool, err := m.NewKVPool((kvPos+qwen3.DefaultPageSize-1)/qwen3.DefaultPageSize, qwen3.DefaultPageSize)
	if err != nil {
		return nil, err
	}
	e := &Engine{Model: m, Config: cfg, Gen: gen, Tok: tok, EOS: map[int32]bool{}, Context: ctxLen, MaxBatch: batch, PrefillChunk: chunk, pool: pool, Metrics: newMetrics(),
		jobs: make(chan *job), quit: make(chan struct{}), done: make(chan struct{})}
	e.sampleCandidates = opt.SampleCandidates
	e.prefix = newPrefixCache(pool, opt.OnKVEvents)
	e.prefix.off = opt.NoPrefixCache
	for _, id := range append(append([]int(nil), cfg.EOSTokenID...), gen.EOSTokenID...) {
		e.EOS[int32(id)] = true
	}
	if id, ok := tok.TokenID(tok.EOSToken); ok && tok.EOSToken != "" {
		e.EOS[id] = true
	}
	go e.schedule()
	return e, nil
}

// Close stops the scheduler (requests in flight end with an error) and
// frees the model and the cache.
func (e *Engine) Close() {
	close(e.quit)
	<-e.done
	e.freeCandidates()
	e.pool.Free()
	e.Model.Free()
}

// ChatPrompt renders messages with the model's chat template (Qwen3's
// unless the tokenizer carries one rendered in Go, see
// tokenizer.RenderChat) and encodes them.
func (e *Engine) ChatPrompt(msgs []tokenizer.Message, thinking bool) []int32 {
	return e.Tok.Encode(e.Tok.RenderChat(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true, DisableThinking: !thinking}))
}

// Request is one generation.
type Request struct {
	Prompt    []int32
	MaxTokens int // 0: until EOS or the context is full
	Sampling  sample.Params
	Stop      []string // generation ends before the first of these in the text
	// OnText, if set, receives the text as it is generated (never part of
	// a UTF-8 character or of a stop string). An error from it stops
	// generation and is returned.
	OnText func(string) error
	// OnToken, if set, receives each generated token id.
	OnToken func(int32)
	// Logprobs asks for each generated token's log probability
	// (logprobs.go) in Result.Logprobs and OnLogprob; TopLogprobs adds
	// that many most likely alternatives (at most MaxTopLogprobs).
	Logprobs    bool
	TopLogprobs int
	// OnLogprob, if set with Logprobs, receives each token's log
	// probability right after OnToken receives the token.
	OnLogprob func(SampledLogprob)
	// PromptLogprobs asks for the log probability of every prompt token
	// after the first, given the tokens before it (Result.PromptLogprobs;
	// vLLM's prompt_logprobs), with PromptTopLogprobs alternatives each
	// (at most MaxTopLogprobs). Such a request prefills its whole prompt
	// by itself (prompt.go), not from the prefix cache.
	PromptLogprobs    bool
	PromptTopLogprobs int
	// OnPromptLogprobs, if set with PromptLogprobs, receives them once
	// the prompt is prefilled, before the first token.
	OnPromptLogprobs func([]SampledLogprob)
}

// Result is what Generate produced.
type Result struct {
	Text             string
	Tokens           []int32
	Logprobs         []SampledLogprob // one per token, if Request.Logprobs
	PromptLogprobs   []SampledLogprob // one per prompt token after the first, if Request.PromptLogprobs
	FinishReason     string           // "stop" (EOS or a stop string) or "length"
	PromptTokens     int
	CachedTokens     int // prompt tokens whose KV came from the prefix cache (not prefilled)
	CompletionTokens int
	Queued           time.Duration // waiting for a place in the batch
	Prefill          time.Duration // from then to the first token
	Decode           time.Duration // the remaining tokens
}

// DecodeTokensPerSecond is the decode rate: tokens after the first over
// the time they took.
func (r *Result) DecodeTokensPerSecond() float64 {
	if r.CompletionTokens < 2 || r.Decode <= 0 {
		return 0
	}
	return float64(r.CompletionTokens-1) / r.Decode.Seconds()
}

// ErrContext is returned (wrapped) when a prompt does not fit the context.
var ErrContext = errors.New("prompt too long for the context")

// ErrClosed is returned when the engine closes under a request.
var ErrClosed = errors.New("engine: closed")

// Generate runs req to completion, or until ctx is done or OnText fails.
// Concurrent calls are batched: each step decodes one token of every
// request in flight, and a request's tokens do not depend on what else is
// in the batch.
func (e *Engine) Generate(ctx context.Context, req Request) (*Result, error) {
	if len(req.Prompt) == 0 {
		return nil, errors.New("engine: empty prompt")
	}
	if len(req.Prompt) >= e.Context {
		return nil, fmt.Errorf("engine: %w: %d tokens, the context holds %d (prompt and at least one generated token)", ErrContext, len(req.Prompt), e.Context)
	}
	if req.TopLogprobs < 0 || req.TopLogprobs > MaxTopLogprobs {
		return nil, fmt.Errorf("engine: top_logprobs %d, want 0 to %d", req.TopLogprobs, MaxTopLogprobs)
	}
	if req.PromptTopLogprobs < 0 || req.PromptTopLogprobs > MaxTopLogprobs {
		return nil, fmt.Errorf("engine: prompt top logprobs %d, want 0 to %d", req.PromptTopLogprobs, MaxTopLogprobs)
	}
	if req.MaxTokens < 0 {
		return nil, fmt.Errorf("engine: max_tokens %d, want ≥ 0", req.MaxTokens)
	}
	for _, id := range req.Prompt {
		if id < 0 || int(id) >= e.Config.VocabSize {
			return nil, fmt.Errorf("engine: prompt token %d is outside the vocabulary", id)
		}
	}
	smp, err := sample.New(req.Sampling)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	budget := e.Context - len(req.Prompt)
	if req.MaxTokens > 0 {
		budget = min(budget, req.MaxTokens)
	}
	j := &job{ctx: ctx, prompt: req.Prompt, budget: budget, smp: smp, stops: req.Stop, logprobs: req.Logprobs, top: req.TopLogprobs,
		promptLP: req.PromptLogprobs, promptTop: req.PromptTopLogprobs,
		events: make(chan event, 2*budget+5), submitted: time.Now()}
	select {
	case e.jobs <- j:
	case <-e.quit:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var cbErr error
	for ev := range j.events {
		if cbErr != nil {
			continue // drain until the scheduler lets the job go
		}
		if ev.tok >= 0 && req.OnToken != nil {
			req.OnToken(ev.tok)
		}
		if ev.lp != nil && req.OnLogprob != nil {
			req.OnLogprob(*ev.lp)
		}
		if ev.plp != nil && req.OnPromptLogprobs != nil {
			req.OnPromptLogprobs(ev.plp)
		}
		if ev.text != "" && req.OnText != nil {
			if cbErr = req.OnText(ev.text); cbErr != nil {
				cancel()
			}
		}
	}
	if cbErr != nil {
		return j.res, cbErr
	}
	return j.res, j.err
}

// Stats are the scheduler's counters.
type Stats struct {
	Running, Waiting int     // requests in the batch, and queued for it
	Steps            int64   // forward passes run
	Forwarded        int64   // token rows run through the model (prefill and decode)
	MaxBatch         int     // the most requests one step has held
	KVUsage          float64 // share of the KV pool's pages held by requests, 0 to 1 (idle cached blocks count as free)
	// CandidateDraws are the tokens drawn from a row's largest logits
	// alone (candidates.go), WholeRows the steps that downloaded every
	// row's logits.
	CandidateDraws, WholeRows int64
}

type stats struct {
	running, waiting, maxBatch atomic.Int64
	steps, forwarded           atomic.Int64
	candidateDraws, wholeRows  atomic.Int64
	stepPicks                  atomic.Int64 // steps whose candidates the step picked itself
}

// Stats returns the scheduler's counters now.
func (e *Engine) Stats() Stats {
	return Stats{Running: int(e.stats.running.Load()), Waiting: int(e.stats.waiting.Load()),
		Steps: e.stats.steps.Load(), Forwarded: e.stats.forwarded.Load(), MaxBatch: int(e.stats.maxBatch.Load()),
		CandidateDraws: e.stats.candidateDraws.Load(), WholeRows: e.stats.wholeRows.Load(),
		KVUsage: 1 - float64(e.pool.FreePages()+int(e.prefix.idle.Load()))/float64(e.pool.Pages)}
}

// ResetPrefixCache forgets every cached prefix block (blocks that running
// requests share are freed when those end).
func (e *Engine) ResetPrefixCache() error { return e.prefix.reset() }
