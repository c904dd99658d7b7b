// Package engine generates text with a Qwen3 model: tokenizer in, prefill,
// decode steps with a sampler, stop on EOS tokens or stop strings, text
// out as it is produced. The command (cmd/qwen3) and the server are thin
// layers over Engine.Generate.
//
// One Engine holds one KV cache and runs one request at a time (Generate
// serializes); batching concurrent requests into one decode step is the
// server's job and is not implemented yet.
package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/llm/sample"
	"github.com/gokern/kern/llm/tokenizer"
)

// Engine is a model, its tokenizer and a KV cache.
type Engine struct {
	Model *qwen3.Model
	Tok   *tokenizer.Tokenizer
	// EOS are the tokens that end generation: config.json's and
	// generation_config.json's eos_token_id and the tokenizer's eos_token.
	EOS     map[int32]bool
	Context int // positions per sequence (prompt + generated)

	mu    sync.Mutex
	cache *qwen3.Cache
}

// Options tune Open.
type Options struct {
	// TokenizerDir holds tokenizer.json (default: the model directory).
	TokenizerDir string
	// Context caps the positions of a sequence; 0 means
	// min(max_position_embeddings, 4096).
	Context  int
	Progress func(done, total int64)
}

// Open loads a model directory onto dev.
func Open(dev *kern.Device, modelDir string, opt Options) (*Engine, error) {
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
	ctxLen := opt.Context
	if ctxLen == 0 {
		ctxLen = 4096
		if mp := m.Config.MaxPositionEmbeddings; mp > 0 {
			ctxLen = min(ctxLen, mp)
		}
	}
	cache, err := m.NewCache(ctxLen)
	if err != nil {
		m.Free()
		return nil, err
	}
	e := &Engine{Model: m, Tok: tok, EOS: map[int32]bool{}, Context: ctxLen, cache: cache}
	for _, id := range append(append([]int(nil), m.Config.EOSTokenID...), m.Gen.EOSTokenID...) {
		e.EOS[int32(id)] = true
	}
	if id, ok := tok.TokenID(tok.EOSToken); ok && tok.EOSToken != "" {
		e.EOS[id] = true
	}
	return e, nil
}

// Close frees the model and cache.
func (e *Engine) Close() {
	e.cache.Free()
	e.Model.Free()
}

// ChatPrompt renders messages with Qwen3's chat template and encodes them.
func (e *Engine) ChatPrompt(msgs []tokenizer.Message, thinking bool) []int32 {
	return e.Tok.Encode(tokenizer.RenderQwen3Chat(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true, DisableThinking: !thinking}))
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
}

// Result is what Generate produced.
type Result struct {
	Text             string
	Tokens           []int32
	FinishReason     string // "stop" (EOS or a stop string) or "length"
	PromptTokens     int
	CompletionTokens int
	Prefill          time.Duration // the prompt's forward pass and first sample
	Decode           time.Duration // the remaining steps
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

// Generate runs req to completion or until ctx is done.
func (e *Engine) Generate(ctx context.Context, req Request) (*Result, error) {
	if len(req.Prompt) == 0 {
		return nil, errors.New("engine: empty prompt")
	}
	if len(req.Prompt) >= e.Context {
		return nil, fmt.Errorf("engine: %w: %d tokens, the context holds %d (prompt and at least one generated token)", ErrContext, len(req.Prompt), e.Context)
	}
	if req.MaxTokens < 0 {
		return nil, fmt.Errorf("engine: max_tokens %d, want ≥ 0", req.MaxTokens)
	}
	smp, err := sample.New(req.Sampling)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cache.Reset()
	res := &Result{PromptTokens: len(req.Prompt), FinishReason: "length"}
	budget := e.Context - len(req.Prompt)
	if req.MaxTokens > 0 {
		budget = min(budget, req.MaxTokens)
	}
	out := newStopWriter(req.Stop, req.OnText)
	stream := e.Tok.NewStream(true)
	seen := append([]int32(nil), req.Prompt...)
	input := req.Prompt
	logits := make([]float32, e.Model.Config.VocabSize)
	start := time.Now()
	for step := 0; step < budget; step++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		buf, err := e.Model.Forward(e.cache, input, false)
		if err != nil {
			return res, fmt.Errorf("engine: %w", err)
		}
		if err := buf.CopyTo(logits); err != nil {
			return res, fmt.Errorf("engine: logits: %w", err)
		}
		tok := smp.Next(logits, seen)
		if step == 0 {
			res.Prefill = time.Since(start)
			start = time.Now()
		}
		res.Tokens = append(res.Tokens, tok)
		res.CompletionTokens++
		seen = append(seen, tok)
		if req.OnToken != nil {
			req.OnToken(tok)
		}
		if e.EOS[tok] {
			res.FinishReason = "stop"
			break
		}
		stopped, err := out.write(stream.Add(tok))
		if err != nil {
			return res, err
		}
		if stopped {
			res.FinishReason = "stop"
			break
		}
		input = []int32{tok}
	}
	res.Decode = time.Since(start)
	if res.FinishReason == "length" || !out.stopped {
		if _, err := out.write(stream.Flush()); err != nil {
			return res, err
		}
	}
	if err := out.flush(); err != nil {
		return res, err
	}
	res.Text = out.text.String()
	return res, nil
}

// stopWriter passes text on, holding back any suffix that could begin a
// stop string, and cuts the text before the first stop string.
type stopWriter struct {
	stops   []string
	onText  func(string) error
	held    string
	text    strings.Builder
	stopped bool
}

func newStopWriter(stops []string, onText func(string) error) *stopWriter {
	var s []string
	for _, x := range stops {
		if x != "" {
			s = append(s, x)
		}
	}
	return &stopWriter{stops: s, onText: onText}
}

func (w *stopWriter) emit(s string) error {
	if s == "" {
		return nil
	}
	w.text.WriteString(s)
	if w.onText != nil {
		return w.onText(s)
	}
	return nil
}

// write adds s; it reports whether a stop string was found.
func (w *stopWriter) write(s string) (bool, error) {
	if w.stopped {
		return true, nil
	}
	w.held += s
	cut := -1
	for _, st := range w.stops {
		if i := strings.Index(w.held, st); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		w.stopped = true
		err := w.emit(w.held[:cut])
		w.held = ""
		return true, err
	}
	keep := 0 // the longest suffix of held that is a proper prefix of a stop string
	for _, st := range w.stops {
		for k := min(len(st)-1, len(w.held)); k > keep; k-- {
			if strings.HasSuffix(w.held, st[:k]) {
				keep = k
				break
			}
		}
	}
	err := w.emit(w.held[:len(w.held)-keep])
	w.held = w.held[len(w.held)-keep:]
	return false, err
}

// flush emits what is held at the end (it did not become a stop string).
func (w *stopWriter) flush() error {
	if w.stopped {
		return nil
	}
	err := w.emit(w.held)
	w.held = ""
	return err
}
