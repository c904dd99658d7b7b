package tokenizer

import (
	"encoding/json"
	"os"
	"testing"
)

// TestQwen3ChatTemplate compares with jinja2's rendering of Qwen3's
// template (testdata/gen_chat_cases.py).
func TestQwen3ChatTemplate(t *testing.T) {
	raw, err := os.ReadFile("testdata/chat_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name                string    `json:"name"`
		Messages            []Message `json:"messages"`
		AddGenerationPrompt bool      `json:"add_generation_prompt"`
		EnableThinking      *bool     `json:"enable_thinking"`
		Rendered            string    `json:"rendered"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		opt := ChatOptions{AddGenerationPrompt: c.AddGenerationPrompt, DisableThinking: c.EnableThinking != nil && !*c.EnableThinking}
		if got := RenderQwen3Chat(c.Messages, opt); got != c.Rendered {
			t.Errorf("%s:\n got %q\nwant %q", c.Name, got, c.Rendered)
		}
	}
	if len(cases) < 10 {
		t.Errorf("only %d cases", len(cases))
	}
}
