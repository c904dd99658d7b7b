package server

// /v1/chat/completions and /v1/completions: parse, check, admit, generate,
// and answer as one JSON object or as server-sent events.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gokern/kern/llm/engine"
	"github.com/gokern/kern/llm/sample"
)

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.m.requests.Add(1)
	e := s.engine()
	if e == nil {
		writeError(w, errNotReady)
		return
	}
	var req chatRequest
	if e := s.decode(r, &req); e != nil {
		writeError(w, e)
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, badParam("messages", "empty; want at least one message"))
		return
	}
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "user", "assistant", "tool":
		default:
			writeError(w, badParam("messages", "message %d has role %q; want system, user, assistant or tool", i, m.Role))
			return
		}
	}
	p, maxTokens, err := req.params(e.Context)
	if err != nil {
		writeError(w, err.(*apiError))
		return
	}
	if req.TopLogprobs != nil {
		if k := *req.TopLogprobs; k < 0 || k > engine.MaxTopLogprobs {
			writeError(w, badParam("top_logprobs", "%d is outside [0, %d]", k, engine.MaxTopLogprobs))
			return
		}
		if !req.Logprobs {
			writeError(w, badParam("top_logprobs", "needs logprobs: true"))
			return
		}
		req.topLogprobs = *req.TopLogprobs
	}
	req.wantLogprobs = req.Logprobs
	if perr := req.checkPromptLogprobs(); perr != nil {
		writeError(w, perr)
		return
	}
	prompt, perr := chatPrompt(e, &req)
	if perr != nil {
		writeError(w, perr)
		return
	}
	s.generate(w, r, e, true, prompt, p, maxTokens, &req.samplingFields)
}

// chatPrompt renders a chat request's messages and tools with Qwen3's
// template and encodes them.
func chatPrompt(e *engine.Engine, req *chatRequest) ([]int32, *apiError) {
	thinking := req.ChatTemplateKwargs.EnableThinking == nil || *req.ChatTemplateKwargs.EnableThinking
	msgs, rerr := renderMessages(req.Messages, req.Tools)
	if rerr != nil {
		return nil, badParam("messages", "%v", rerr)
	}
	req.parseTools = len(req.Tools) > 0 && string(req.ToolChoice) != `"none"`
	prompt := e.ChatPrompt(msgs, thinking)
	return prompt, nil
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	s.m.requests.Add(1)
	e := s.engine()
	if e == nil {
		writeError(w, errNotReady)
		return
	}
	var req completionRequest
	if e := s.decode(r, &req); e != nil {
		writeError(w, e)
		return
	}
	var prompt []int32
	var text string
	var texts []string
	switch {
	case json.Unmarshal(req.Prompt, &text) == nil:
		prompt = e.Tok.Encode(text)
	case json.Unmarshal(req.Prompt, &texts) == nil && len(texts) == 1:
		text = texts[0]
		prompt = e.Tok.Encode(text)
	case json.Unmarshal(req.Prompt, &prompt) == nil:
		text = e.Tok.Decode(prompt, false)
		for _, id := range prompt {
			if id < 0 || int(id) >= e.Config.VocabSize {
				writeError(w, badParam("prompt", "token id %d is outside the vocabulary", id))
				return
			}
		}
	default:
		writeError(w, badParam("prompt", "want a string, a list of one string, or a list of token ids"))
		return
	}
	if len(prompt) == 0 {
		writeError(w, badParam("prompt", "empty"))
		return
	}
	if req.Logprobs != nil {
		if k := *req.Logprobs; k < 0 || k > engine.MaxTopLogprobs {
			writeError(w, badParam("logprobs", "%d is outside [0, %d]", k, engine.MaxTopLogprobs))
			return
		}
		req.wantLogprobs, req.topLogprobs = true, *req.Logprobs
	}
	if perr := req.checkPromptLogprobs(); perr != nil {
		writeError(w, perr)
		return
	}
	req.echo, req.promptText = req.Echo, text
	if req.Echo && req.wantLogprobs {
		req.promptLP, req.promptTop = true, max(req.promptTop, req.topLogprobs)
	}
	p, maxTokens, err := req.params(16) // OpenAI's default for completions
	if err != nil {
		writeError(w, err.(*apiError))
		return
	}
	s.generate(w, r, e, false, prompt, p, maxTokens, &req.samplingFields)
}

// generate runs a checked request and writes the response.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, e *engine.Engine, chat bool, prompt []int32, p sample.Params, maxTokens int, f *samplingFields) {
	if f.Model != "" && f.Model != s.ModelName {
		code := "model_not_found"
		writeError(w, &apiError{status: 404, Type: "invalid_request_error", Code: &code,
			Message: fmt.Sprintf("the model %q does not exist; this server serves %q", f.Model, s.ModelName)})
		return
	}
	if ctxLen := e.Context; len(prompt) >= ctxLen {
		code := "context_length_exceeded"
		writeError(w, &apiError{status: 400, Type: "invalid_request_error", Code: &code,
			Message: fmt.Sprintf("the prompt is %d tokens; this model's context is %d tokens (prompt and completion)", len(prompt), ctxLen)})
		return
	}
	release, aerr := s.admit()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	defer release()
	req := engine.Request{Prompt: prompt, MaxTokens: maxTokens, Sampling: p, Stop: f.Stop,
		Logprobs: f.wantLogprobs, TopLogprobs: f.topLogprobs, PromptLogprobs: f.promptLP, PromptTopLogprobs: f.promptTop}
	prefix, object := "cmpl", "text_completion"
	if chat {
		prefix, object = "chatcmpl", "chat.completion"
	}
	id, created, model := s.id(prefix), time.Now().Unix(), s.ModelName
	if !f.Stream {
		res, err := s.run(r.Context(), e, req)
		if err != nil {
			s.fail(w, err)
			return
		}
		u := newUsage(res)
		if chat {
			msg := &chatMessage{Role: "assistant", Content: res.Text}
			if s.SplitReasoning {
				msg.ReasoningContent, msg.Content = splitReasoning(res.Text)
			}
			finish := res.FinishReason
			if f.parseTools {
				if content, calls := parseToolCalls(msg.Content, id); len(calls) > 0 {
					msg.Content, msg.ToolCalls, finish = content, calls, "tool_calls"
				}
			}
			ch := chatChoice{Message: msg, FinishReason: &finish}
			if f.wantLogprobs {
				ch.Logprobs = chatLogprobsOf(e, res.Logprobs)
			}
			cr := chatResponse{ID: id, Object: object, Created: created, Model: model, Usage: u, Choices: []chatChoice{ch}}
			if f.vllmPrompt {
				cr.PromptLogprobs = vllmPromptLogprobs(e, res.PromptLogprobs, *f.PromptLogprobs)
			}
			writeJSON(w, 200, cr)
		} else {
			ch := textChoice{Text: res.Text, FinishReason: &res.FinishReason}
			if f.echo {
				ch.Text = f.promptText + res.Text
			}
			switch {
			case f.wantLogprobs && f.echo:
				ch.Logprobs = echoLogprobsOf(e, prompt, res.PromptLogprobs, res.Logprobs, f.topLogprobs)
			case f.wantLogprobs:
				ch.Logprobs = textLogprobsOf(e, res.Logprobs, 0)
			}
			if f.vllmPrompt {
				ch.PromptLogprobs = vllmPromptLogprobs(e, res.PromptLogprobs, *f.PromptLogprobs)
			}
			writeJSON(w, 200, textResponse{ID: id, Object: object, Created: created, Model: model, Usage: u,
				Choices: []textChoice{ch}})
		}
		return
	}

	// Server-sent events: one "data: {chunk}" per piece of text, a last
	// chunk with the finish reason, usage if asked for, then [DONE].
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	send := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return fmt.Errorf("%w: %v", errClientGone, err)
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	reasoning := ""                     // set while chunk builds a reasoning delta
	var calls []toolCall                // set while chunk builds a tool_calls delta
	var pending []engine.SampledLogprob // logprobs not yet sent
	offset := 0                         // text_offset of the next token
	if f.wantLogprobs {
		req.OnLogprob = func(lp engine.SampledLogprob) { pending = append(pending, lp) }
	}
	chunk := func(text string, role string, finish *string) any {
		if chat {
			d := &chatMessage{Role: role, Content: text, ToolCalls: calls}
			if reasoning != "" {
				d.Content, d.ReasoningContent = "", reasoning
			}
			ch := chatChoice{Delta: d, FinishReason: finish}
			if len(pending) > 0 {
				ch.Logprobs = chatLogprobsOf(e, pending)
				pending = nil
			}
			return chatResponse{ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
				Choices: []chatChoice{ch}}
		}
		ch := textChoice{Text: text, FinishReason: finish}
		if len(pending) > 0 {
			lp := textLogprobsOf(e, pending, offset)
			ch.Logprobs = lp
			for _, t := range lp.Tokens {
				offset += len(t)
			}
			pending = nil
		}
		return textResponse{ID: id, Object: object, Created: created, Model: model,
			Choices: []textChoice{ch}}
	}
	if chat {
		if send(chunk("", "assistant", nil)) != nil {
			s.m.cancelled.Add(1)
			return
		}
	} else if f.echo && !f.wantLogprobs {
		if send(chunk(f.promptText, "", nil)) != nil {
			s.m.cancelled.Add(1)
			return
		}
		offset = len(f.promptText)
	}
	// Prompt logprobs arrive once the prompt is prefilled, before the
	// first token: one chunk carries them (with the echoed prompt, when
	// echo with logprobs asked for them in the legacy lists).
	var promptErr error
	if f.promptLP {
		req.OnPromptLogprobs = func(plp []engine.SampledLogprob) {
			var vllm []map[string]promptLogprob
			if f.vllmPrompt {
				vllm = vllmPromptLogprobs(e, plp, *f.PromptLogprobs)
			}
			if chat {
				promptErr = send(chatResponse{ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
					Choices: []chatChoice{{Delta: &chatMessage{}}}, PromptLogprobs: vllm})
				return
			}
			ch := textChoice{PromptLogprobs: vllm}
			if f.echo && f.wantLogprobs {
				ch.Text = f.promptText
				lp := echoLogprobsOf(e, prompt, plp, nil, f.topLogprobs)
				ch.Logprobs = lp
				for _, t := range lp.Tokens {
					offset += len(t)
				}
			}
			promptErr = send(textResponse{ID: id, Object: object, Created: created, Model: model, Choices: []textChoice{ch}})
		}
	}
	var split *thinkSplitter
	if chat && s.SplitReasoning {
		split = &thinkSplitter{}
	}
	var tools *toolStreamer
	if chat && f.parseTools {
		tools = &toolStreamer{idPrefix: id}
	}
	sentCalls := false
	// emit sends text as reasoning, content and tool_calls deltas.
	emit := func(r, c string) error {
		var cs []toolCall
		if tools != nil {
			c, cs = tools.add(c)
		}
		if r != "" {
			reasoning = r
			err := send(chunk("", "", nil))
			reasoning = ""
			if err != nil {
				return err
			}
		}
		if c != "" {
			if err := send(chunk(c, "", nil)); err != nil {
				return err
			}
		}
		if len(cs) > 0 {
			calls, sentCalls = cs, true
			err := send(chunk("", "", nil))
			calls = nil
			return err
		}
		return nil
	}
	req.OnText = func(t string) error {
		if promptErr != nil {
			return promptErr
		}
		if split != nil {
			return emit(split.add(t))
		}
		return emit("", t)
	}
	res, err := s.run(r.Context(), e, req)
	if err == nil && split != nil {
		err = emit(split.flush())
	}
	if err == nil && tools != nil {
		if c := tools.flush(); c != "" {
			err = send(chunk(c, "", nil))
		}
	}
	if err == nil && sentCalls {
		res.FinishReason = "tool_calls"
	}
	if err != nil {
		if !errors.Is(err, errClientGone) && r.Context().Err() == nil {
			send(map[string]any{"error": &apiError{Message: err.Error(), Type: "server_error"}})
		}
		return
	}
	if send(chunk("", "", &res.FinishReason)) != nil {
		return
	}
	if f.StreamOptions != nil && f.StreamOptions.IncludeUsage {
		u := newUsage(res)
		var v any = chatResponse{ID: id, Object: "chat.completion.chunk", Created: created, Model: model, Choices: []chatChoice{}, Usage: u}
		if !chat {
			v = textResponse{ID: id, Object: object, Created: created, Model: model, Choices: []textChoice{}, Usage: u}
		}
		if send(v) != nil {
			return
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// fail answers a non-streaming request whose generation failed.
func (s *Server) fail(w http.ResponseWriter, err error) {
	if errors.Is(err, engine.ErrContext) {
		writeError(w, badRequest("%v", err))
		return
	}
	writeError(w, &apiError{status: 500, Message: err.Error(), Type: "server_error"})
}
