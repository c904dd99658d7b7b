package tokenizer

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/gokern/kern/internal/fixture"
)

// TestQwen3Tokenizer: Qwen3's real tokenizer (151k tokens, fetched by
// npm) encodes a corpus of hard strings to exactly the ids HF tokenizers
// gives (testdata/qwen3_reference.json, from gen_qwen3_reference.py), and
// decodes them back to HF's text.
func TestQwen3Tokenizer(t *testing.T) {
	tok, err := Load(fixture.QwenTokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/qwen3_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []refCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	for _, c := range ref.Cases {
		if ids := tok.Encode(c.Text); !equal(ids, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, ids, c.IDs)
		}
		if d := tok.Decode(c.IDs, false); d != c.Decoded {
			t.Errorf("Decode(%v) = %q, want %q", c.IDs, d, c.Decoded)
		}
		checkRoundTrip(t, tok, c.Text)
	}
	if len(ref.Cases) < 40 {
		t.Errorf("only %d reference cases", len(ref.Cases))
	}
	if tok.EOSToken != "<|im_end|>" || tok.VocabSize() != 151669 {
		t.Errorf("eos %q vocab %d", tok.EOSToken, tok.VocabSize())
	}
	// The template the tokenizer ships is the one chat_cases.json renders.
	tmpl, err := os.ReadFile("testdata/qwen3_chat_template.jinja")
	if err != nil {
		t.Fatal(err)
	}
	if tok.ChatTemplate != string(tmpl) {
		t.Error("tokenizer_config.json's chat_template differs from testdata/qwen3_chat_template.jinja")
	}
}
