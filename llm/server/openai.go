package server

// The OpenAI API's request and response shapes (the subset kern serves),
// and turning a request into an engine.Request with every parameter
// range-checked.

import (
	"encoding/json"
	"fmt"

	"github.com/gokern/kern/llm/engine"
	"github.com/gokern/kern/llm/sample"
)

// stopList is "stop": a string or a list of strings.
type stopList []string

func (s *stopList) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = nil
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = stopList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("stop: want a string or a list of strings")
	}
	*s = many
	return nil
}

// samplingFields are the parameters chat and text completions share
// (top_k, min_p and repetition_penalty as vLLM accepts them).
type samplingFields struct {
	Model               string   `json:"model"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
	TopP                *float64 `json:"top_p"`
	TopK                *int     `json:"top_k"`
	MinP                *float64 `json:"min_p"`
	RepetitionPenalty   *float64 `json:"repetition_penalty"`
	Seed                *int64   `json:"seed"`
	Stop                stopList `json:"stop"`
	Stream              bool     `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N *int `json:"n"`

	// Set by the handlers from each API's own logprobs fields.
	wantLogprobs bool `json:"-"`
	topLogprobs  int  `json:"-"`
	parseTools   bool `json:"-"` // tool_calls out of <tool_call> blocks (tools.go)
	// Prompt logprobs (prompt.go): computed with promptTop alternatives;
	// answered as prompt_logprobs (vllmPrompt, k alternatives) and/or
	// echoed with the completion (echo; promptText is the prompt).
	PromptLogprobs *int   `json:"prompt_logprobs"`
	promptLP       bool   `json:"-"`
	promptTop      int    `json:"-"`
	vllmPrompt     bool   `json:"-"`
	echo           bool   `json:"-"`
	promptText     string `json:"-"`
}

// checkPromptLogprobs reads prompt_logprobs (vLLM's extension, 0 to 20).
func (f *samplingFields) checkPromptLogprobs() *apiError {
	if f.PromptLogprobs == nil {
		return nil
	}
	if k := *f.PromptLogprobs; k < 0 || k > engine.MaxTopLogprobs {
		return badParam("prompt_logprobs", "%d is outside [0, %d]", k, engine.MaxTopLogprobs)
	}
	f.promptLP, f.vllmPrompt, f.promptTop = true, true, *f.PromptLogprobs
	return nil
}

type chatRequest struct {
	samplingFields
	Messages           []chatInMessage   `json:"messages"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	ChatTemplateKwargs struct {
		EnableThinking *bool `json:"enable_thinking"`
	} `json:"chat_template_kwargs"`
	Logprobs    bool `json:"logprobs"`
	TopLogprobs *int `json:"top_logprobs"`
}

type completionRequest struct {
	samplingFields
	Prompt   json.RawMessage `json:"prompt"`
	Logprobs *int            `json:"logprobs"`
	Echo     bool            `json:"echo"`
}

// params checks the sampling fields; defaultMax applies when neither
// max_tokens nor max_completion_tokens is given.
func (f *samplingFields) params(defaultMax int) (sample.Params, int, error) {
	p := sample.Params{Temperature: 1, TopP: 1}
	if f.Temperature != nil {
		if t := *f.Temperature; !(t >= 0 && t <= 2) {
			return p, 0, badParam("temperature", "%g is outside [0, 2]", t)
		}
		p.Temperature = *f.Temperature
	}
	if f.TopP != nil {
		if t := *f.TopP; !(t > 0 && t <= 1) {
			return p, 0, badParam("top_p", "%g is outside (0, 1]", t)
		}
		p.TopP = *f.TopP
	}
	if f.TopK != nil {
		if *f.TopK < -1 {
			return p, 0, badParam("top_k", "%d, want -1 (all) or ≥ 0", *f.TopK)
		}
		p.TopK = max(*f.TopK, 0)
	}
	if f.MinP != nil {
		if t := *f.MinP; !(t >= 0 && t <= 1) {
			return p, 0, badParam("min_p", "%g is outside [0, 1]", t)
		}
		p.MinP = *f.MinP
	}
	if f.RepetitionPenalty != nil {
		if t := *f.RepetitionPenalty; !(t > 0 && t <= 10) {
			return p, 0, badParam("repetition_penalty", "%g is outside (0, 10]", t)
		}
		p.RepetitionPenalty = *f.RepetitionPenalty
	}
	if f.Seed != nil {
		p.Seed = uint64(*f.Seed)
	}
	if f.N != nil && *f.N != 1 {
		return p, 0, badParam("n", "only n = 1 is supported")
	}
	maxTokens := defaultMax
	for _, m := range []*int{f.MaxTokens, f.MaxCompletionTokens} {
		if m != nil {
			if *m < 1 {
				return p, 0, badParam("max_tokens", "%d, want ≥ 1", *m)
			}
			maxTokens = *m
		}
	}
	for _, s := range f.Stop {
		if s == "" {
			return p, 0, badParam("stop", "empty stop string")
		}
	}
	if len(f.Stop) > 16 {
		return p, 0, badParam("stop", "%d stop strings, at most 16", len(f.Stop))
	}
	return p, maxTokens, nil
}

// apiError is OpenAI's error body.
type apiError struct {
	status  int
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) Error() string { return e.Message }

func badParam(param, format string, a ...any) *apiError {
	return &apiError{status: 400, Message: param + ": " + fmt.Sprintf(format, a...), Type: "invalid_request_error", Param: &param}
}

func badRequest(format string, a ...any) *apiError {
	return &apiError{status: 400, Message: fmt.Sprintf(format, a...), Type: "invalid_request_error"}
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// PromptTokensDetails.CachedTokens: prompt tokens served from the
	// prefix cache (OpenAI's field; vLLM fills it the same way).
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details,omitempty"`
}

func newUsage(res *engine.Result) *usage {
	u := &usage{PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, TotalTokens: res.PromptTokens + res.CompletionTokens}
	u.PromptTokensDetails = &struct {
		CachedTokens int `json:"cached_tokens"`
	}{res.CachedTokens}
	return u
}

type chatMessage struct {
	Role             string     `json:"role,omitempty"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
}

type chatChoice struct {
	Index        int           `json:"index"`
	Message      *chatMessage  `json:"message,omitempty"`
	Delta        *chatMessage  `json:"delta,omitempty"`
	Logprobs     *chatLogprobs `json:"logprobs,omitempty"`
	FinishReason *string       `json:"finish_reason"`
}

type chatResponse struct {
	ID             string                     `json:"id"`
	Object         string                     `json:"object"`
	Created        int64                      `json:"created"`
	Model          string                     `json:"model"`
	Choices        []chatChoice               `json:"choices"`
	Usage          *usage                     `json:"usage,omitempty"`
	PromptLogprobs []map[string]promptLogprob `json:"prompt_logprobs,omitempty"`
}

type textChoice struct {
	Index          int                        `json:"index"`
	Text           string                     `json:"text"`
	Logprobs       any                        `json:"logprobs"`
	FinishReason   *string                    `json:"finish_reason"`
	PromptLogprobs []map[string]promptLogprob `json:"prompt_logprobs,omitempty"`
}

type textResponse struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []textChoice `json:"choices"`
	Usage   *usage       `json:"usage,omitempty"`
}
