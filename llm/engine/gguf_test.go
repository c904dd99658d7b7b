package engine

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/gguf"
	"github.com/gokern/kern/llm/tokenizer"
)

// byteLevel is GPT-2's byte-to-character map: printable bytes stand for
// themselves, the rest for U+0100 onwards in byte order.
func byteLevel() []string {
	out := make([]string, 256)
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE {
			out[b] = string(rune(b))
		} else {
			out[b] = string(rune(256 + n))
			n++
		}
	}
	return out
}

// tinyGGUF writes a one-layer Llama GGUF with random F32 weights and a
// byte-level vocabulary (every byte, no merges) plus ChatML's control
// tokens and SmolLM2's chat template.
func tinyGGUF(t *testing.T) string {
	t.Helper()
	tokens := append(byteLevel(), "<|endoftext|>", "<|im_start|>", "<|im_end|>")
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = 1
		if i >= 256 {
			types[i] = 3
		}
	}
	const H, I, heads, kv = 32, 64, 2, 1
	V := len(tokens)
	rng := rand.New(rand.NewPCG(1, 2))
	f32 := func(n int, scale float64) []byte {
		b := make([]byte, 0, 4*n)
		for i := 0; i < n; i++ {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(scale*rng.NormFloat64())))
		}
		return b
	}
	ones := func(n int) []byte {
		b := make([]byte, 0, 4*n)
		for i := 0; i < n; i++ {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(1))
		}
		return b
	}
	tensors := []gguf.TensorData{
		{Name: "token_embd.weight", Dims: []int{H, V}, Type: gguf.F32, Data: f32(H*V, 1)},
		{Name: "output_norm.weight", Dims: []int{H}, Type: gguf.F32, Data: ones(H)},
		{Name: "blk.0.attn_norm.weight", Dims: []int{H}, Type: gguf.F32, Data: ones(H)},
		{Name: "blk.0.ffn_norm.weight", Dims: []int{H}, Type: gguf.F32, Data: ones(H)},
		{Name: "blk.0.attn_q.weight", Dims: []int{H, H}, Type: gguf.F32, Data: f32(H*H, 0.2)},
		{Name: "blk.0.attn_k.weight", Dims: []int{H, H / heads * kv}, Type: gguf.F32, Data: f32(H*H/heads*kv, 0.2)},
		{Name: "blk.0.attn_v.weight", Dims: []int{H, H / heads * kv}, Type: gguf.F32, Data: f32(H*H/heads*kv, 0.2)},
		{Name: "blk.0.attn_output.weight", Dims: []int{H, H}, Type: gguf.F32, Data: f32(H*H, 0.2)},
		{Name: "blk.0.ffn_gate.weight", Dims: []int{H, I}, Type: gguf.F32, Data: f32(H*I, 0.2)},
		{Name: "blk.0.ffn_up.weight", Dims: []int{H, I}, Type: gguf.F32, Data: f32(H*I, 0.2)},
		{Name: "blk.0.ffn_down.weight", Dims: []int{I, H}, Type: gguf.F32, Data: f32(H*I, 0.2)},
	}
	template := "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
	meta := []gguf.KV{
		{Key: "general.architecture", Value: "llama"},
		{Key: "llama.block_count", Value: uint32(1)},
		{Key: "llama.context_length", Value: uint32(256)},
		{Key: "llama.embedding_length", Value: uint32(H)},
		{Key: "llama.feed_forward_length", Value: uint32(I)},
		{Key: "llama.attention.head_count", Value: uint32(heads)},
		{Key: "llama.attention.head_count_kv", Value: uint32(kv)},
		{Key: "llama.rope.freq_base", Value: float32(10000)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: float32(1e-5)},
		{Key: "tokenizer.ggml.model", Value: "gpt2"},
		{Key: "tokenizer.ggml.pre", Value: "smollm"},
		{Key: "tokenizer.ggml.tokens", Value: tokens},
		{Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.merges", Value: []string{}},
		{Key: "tokenizer.ggml.eos_token_id", Value: uint32(V - 1)},
		{Key: "tokenizer.chat_template", Value: template},
	}
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := gguf.WriteFile(path, meta, tensors); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOpenGGUF opens a .gguf path end to end: tokenizer and chat template
// from the file's metadata, EOS from it, and greedy generation that is
// the same on the emulator and in native mode.
func TestOpenGGUF(t *testing.T) {
	path := tinyGGUF(t)
	var first []int32
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		e, err := Open(dev, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		eos := int32(e.Tok.VocabSize() - 1)
		if !e.EOS[eos] || e.Tok.EOSToken != "<|im_end|>" {
			t.Fatalf("EOS %v, tokenizer eos %q", e.EOS, e.Tok.EOSToken)
		}
		prompt := e.ChatPrompt([]tokenizer.Message{{Role: "user", Content: "Hi"}}, false)
		text := e.Tok.Decode(prompt, false)
		if !strings.HasPrefix(text, "<|im_start|>system\nYou are a helpful AI assistant named SmolLM") || !strings.HasSuffix(text, "<|im_start|>assistant\n") {
			t.Fatalf("chat prompt %q", text)
		}
		res, err := e.Generate(context.Background(), Request{Prompt: prompt, MaxTokens: 6})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tokens) == 0 {
			t.Fatal("no tokens")
		}
		if first == nil {
			first = res.Tokens
		} else if !slices.Equal(first, res.Tokens) {
			t.Errorf("%s generated %v, emulator %v", dev.Kind(), res.Tokens, first)
		}
	}
	if _, err := Open(kern.OpenNative(), filepath.Join(t.TempDir(), "missing.gguf"), Options{}); err == nil || !strings.Contains(err.Error(), "missing.gguf") {
		t.Errorf("missing file: %v", err)
	}
}
