package tokenizer

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gokern/kern/llm/gguf"
)

// tinyGGUF is a byte-level BPE vocabulary in GGUF metadata: ids 0–1 are
// control tokens, the rest normal.
func tinyGGUF(t *testing.T, pre string, extra ...gguf.KV) *gguf.File {
	t.Helper()
	tokens := []string{"<|endoftext|>", "<|im_start|>", "a", "b", "Ġ", "1", "2", "ab", "Ġab", "12", "<", "|", ">", "\n", "Ċ"}
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = 1
	}
	types[0], types[1] = 3, 3
	meta := append([]gguf.KV{
		{Key: "tokenizer.ggml.model", Value: "gpt2"},
		{Key: "tokenizer.ggml.pre", Value: pre},
		{Key: "tokenizer.ggml.tokens", Value: tokens},
		{Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.merges", Value: []string{"a b", "Ġ ab", "1 2"}},
		{Key: "tokenizer.ggml.eos_token_id", Value: uint32(0)},
		{Key: "tokenizer.chat_template", Value: smolLM2Template},
	}, extra...)
	img, err := gguf.Encode(meta, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Parse("tiny.gguf", img)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestFromGGUF(t *testing.T) {
	for _, c := range []struct {
		pre  string
		want []int32
	}{
		// smollm splits digits apart before BPE, so "12" never merges.
		{"smollm", []int32{7, 8, 5, 6, 1, 2}},
		{"gpt2", []int32{7, 8, 9, 1, 2}},
	} {
		tok, err := FromGGUF(tinyGGUF(t, c.pre))
		if err != nil {
			t.Fatal(err)
		}
		text := "ab ab12<|im_start|>a"
		got := tok.Encode(text)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("pre %s: Encode(%q) = %v, want %v", c.pre, text, got, c.want)
		}
		if d := tok.Decode(got, false); d != text {
			t.Errorf("pre %s: Decode = %q, want %q", c.pre, d, text)
		}
		if !tok.IsSpecial(1) || tok.IsSpecial(2) {
			t.Errorf("control tokens should be special, normal ones not")
		}
		if tok.EOSToken != "<|endoftext|>" {
			t.Errorf("EOSToken = %q", tok.EOSToken)
		}
	}
}

func TestFromGGUFErrors(t *testing.T) {
	for _, c := range []struct {
		pre   string
		extra []gguf.KV
		want  string
	}{
		{"llama3", nil, `tokenizer.ggml.pre "llama3"`},
		{"gpt2", []gguf.KV{{Key: "tokenizer.ggml.bos_token_id", Value: uint32(99)}}, "bos_token_id = 99 is not a token id"},
	} {
		_, err := FromGGUF(tinyGGUF(t, c.pre, c.extra...))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "tiny.gguf") {
			t.Errorf("got %v, want an error naming tiny.gguf with %q", err, c.want)
		}
	}
}

func TestRenderChatSmolLM2(t *testing.T) {
	tok, err := FromGGUF(tinyGGUF(t, "smollm"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{Role: "user", Content: "Hi"}}
	want := "<|im_start|>system\n" + smolLM2System + "<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
	if got := tok.RenderChat(msgs, ChatOptions{AddGenerationPrompt: true}); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	own := []Message{{Role: "system", Content: "S"}, {Role: "user", Content: "Q"}, {Role: "assistant", Content: "A"}}
	want = "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n"
	if got := tok.RenderChat(own, ChatOptions{}); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// Any other template keeps the Qwen3 rendering.
	tok.ChatTemplate = "{{ other }}"
	if got := tok.RenderChat(msgs, ChatOptions{AddGenerationPrompt: true}); got != RenderQwen3Chat(msgs, ChatOptions{AddGenerationPrompt: true}) {
		t.Errorf("fallback: %q", got)
	}
}
