package tokenizer

// A tokenizer from a GGUF file's metadata (tokenizer.ggml.*), for models
// shipped only as GGUF. The metadata is turned into the tokenizer.json
// this package already parses, so one BPE implementation serves both.
//
// GGUF names the pre-tokenizer by a short id (tokenizer.ggml.pre) rather
// than spelling it out; llama.cpp maps each id to its regexes. The ids
// here are the ones whose meaning is a plain ByteLevel split, optionally
// preceded by splitting every digit apart (tokenizers' Digits with
// individual_digits, which is a Split on \p{N}).

import (
	"encoding/json"
	"fmt"

	"github.com/gokern/kern/llm/gguf"
)

// GGUF token types (llama_token_type).
const (
	ggufNormal      = 1
	ggufUnknown     = 2
	ggufControl     = 3
	ggufUserDefined = 4
	ggufUnused      = 5
	ggufByte        = 6
)

// ggufPre maps tokenizer.ggml.pre to whether digits are split one by one
// before the ByteLevel split.
var ggufPre = map[string]bool{
	"default": false, "gpt2": false, "gpt-2": false,
	"smollm": true, "starcoder": true, "refact": true,
}

// FromGGUF builds the tokenizer a GGUF file describes. Only gpt2-style
// (byte-level BPE) vocabularies are supported.
func FromGGUF(g *gguf.File) (*Tokenizer, error) {
	fail := func(format string, args ...any) (*Tokenizer, error) {
		return nil, fmt.Errorf("tokenizer: %s: "+format, append([]any{g.Path}, args...)...)
	}
	model, err := g.String("tokenizer.ggml.model")
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if model != "gpt2" {
		return fail("tokenizer.ggml.model %q: only gpt2 (byte-level BPE) is implemented", model)
	}
	pre := "default"
	if _, ok := g.Meta["tokenizer.ggml.pre"]; ok {
		if pre, err = g.String("tokenizer.ggml.pre"); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
	}
	digits, ok := ggufPre[pre]
	if !ok {
		return fail("tokenizer.ggml.pre %q: pre-tokenizer not implemented (known: default, gpt2, smollm, starcoder, refact)", pre)
	}
	tokens, err := g.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	merges, err := g.Strings("tokenizer.ggml.merges")
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	types := make([]int, len(tokens))
	if _, ok := g.Meta["tokenizer.ggml.token_type"]; ok {
		if types, err = g.Ints("tokenizer.ggml.token_type"); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if len(types) != len(tokens) {
			return fail("%d token types for %d tokens", len(types), len(tokens))
		}
	}
	type added struct {
		ID      int32  `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	}
	f := struct {
		AddedTokens  []added `json:"added_tokens"`
		PreTokenizer any     `json:"pre_tokenizer"`
		Model        any     `json:"model"`
	}{}
	vocab := make(map[string]int32, len(tokens))
	for i, tok := range tokens {
		if prev, dup := vocab[tok]; dup {
			return fail("token %d %q repeats token %d", i, tok, prev)
		}
		vocab[tok] = int32(i)
		switch types[i] {
		case ggufControl, ggufUserDefined:
			if tok == "" {
				return fail("token %d: empty %s token", i, map[int]string{3: "control", 4: "user-defined"}[types[i]])
			}
			f.AddedTokens = append(f.AddedTokens, added{int32(i), tok, types[i] == ggufControl})
		case ggufByte:
			return fail("token %d %q is a byte token (SentencePiece byte fallback): not implemented", i, tok)
		}
	}
	byteLevel := map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}
	f.PreTokenizer = byteLevel
	if digits {
		f.PreTokenizer = map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]string{"Regex": `\p{N}`}, "behavior": "Isolated"},
			byteLevel,
		}}
	}
	f.Model = map[string]any{"type": "BPE", "vocab": vocab, "merges": merges}
	raw, err := json.Marshal(f)
	if err != nil {
		return fail("%v", err)
	}
	t, err := Parse(raw)
	if err != nil {
		return fail("%v", err)
	}
	name := func(key string) (string, error) {
		if _, ok := g.Meta[key]; !ok {
			return "", nil
		}
		id, err := g.Int(key)
		if err != nil {
			return "", fmt.Errorf("tokenizer: %w", err)
		}
		if id < 0 || id >= len(tokens) {
			return "", fmt.Errorf("tokenizer: %s: %s = %d is not a token id (vocabulary of %d)", g.Path, key, id, len(tokens))
		}
		return tokens[id], nil
	}
	if t.EOSToken, err = name("tokenizer.ggml.eos_token_id"); err != nil {
		return nil, err
	}
	if t.BOSToken, err = name("tokenizer.ggml.bos_token_id"); err != nil {
		return nil, err
	}
	if t.PadToken, err = name("tokenizer.ggml.padding_token_id"); err != nil {
		return nil, err
	}
	if _, ok := g.Meta["tokenizer.chat_template"]; ok {
		if t.ChatTemplate, err = g.String("tokenizer.chat_template"); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
	}
	return t, nil
}
