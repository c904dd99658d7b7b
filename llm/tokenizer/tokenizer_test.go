package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gokern/kern/internal/fixture"
	"golang.org/x/text/unicode/norm"
)

func loadTiny(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := Load(fixture.Tokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type refCase struct {
	Text    string   `json:"text"`
	IDs     []int32  `json:"ids"`
	Tokens  []string `json:"tokens"`
	Decoded string   `json:"decoded"`
}

// TestReferenceEncodings compares with the encodings HF tokenizers made
// (tokenizer_reference.json, written by make_tiny.py).
func TestReferenceEncodings(t *testing.T) {
	tok := loadTiny(t)
	raw, err := os.ReadFile(filepath.Join(fixture.Tokenizer(t), "tokenizer_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		VocabSize int       `json:"vocab_size"`
		Cases     []refCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() != ref.VocabSize {
		t.Errorf("vocab size %d, want %d", tok.VocabSize(), ref.VocabSize)
	}
	for _, c := range ref.Cases {
		ids := tok.Encode(c.Text)
		if !equal(ids, c.IDs) {
			var got []string
			for _, id := range ids {
				got = append(got, tok.Token(id))
			}
			t.Errorf("Encode(%q)\n got %v %q\nwant %v %q", c.Text, ids, got, c.IDs, c.Tokens)
		}
		if d := tok.Decode(c.IDs, false); d != c.Decoded {
			t.Errorf("Decode(%v) = %q, want %q", c.IDs, d, c.Decoded)
		}
	}
	if len(ref.Cases) == 0 {
		t.Fatal("no reference cases")
	}
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var hardStrings = []string{
	"", " ", "\n", "\t\t  \n\n \r\n", "a", "Hello, world!",
	"func main() {\n\tfmt.Println(\"héllo\")\n}\n",
	"日本語のテキストと中文混合", "emoji 👩‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏽",
	"e\u0301 (decomposed é) and Å", "numbers 1234567890 3.14 -7e10",
	"<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\n<|im_end|>",
	"<|im_start<|im_end|>|>", "don't won't I'M Y'ALL", "   leading and trailing   ",
	"\x00\x01\x7f control", "ﬁ ligature, Ⅻ numeral, ½", "zero\u200bwidth", strings.Repeat("ab", 300),
}

// TestRoundTrip: decoding an encoding gives back the NFC-normalized text,
// and streaming gives the same text as decoding at once.
func TestRoundTrip(t *testing.T) {
	tok := loadTiny(t)
	for _, s := range hardStrings {
		checkRoundTrip(t, tok, s)
	}
}

func checkRoundTrip(t *testing.T, tok *Tokenizer, s string) {
	t.Helper()
	ids := tok.Encode(s)
	want := norm.NFC.String(s)
	if got := tok.Decode(ids, false); got != want {
		t.Errorf("Decode(Encode(%q)) = %q", s, got)
	}
	st := tok.NewStream(false)
	var b strings.Builder
	for _, id := range ids {
		piece := st.Add(id)
		if !utf8.ValidString(piece) {
			t.Errorf("%q: stream piece %q is not valid UTF-8", s, piece)
		}
		b.WriteString(piece)
	}
	b.WriteString(st.Flush())
	if b.String() != want {
		t.Errorf("stream of %q = %q", s, b.String())
	}
}

// TestStreamHoldsPartialCharacters feeds a 4-byte emoji one byte-token at
// a time: nothing comes out until the character is complete.
func TestStreamHoldsPartialCharacters(t *testing.T) {
	tok := loadTiny(t)
	emoji := "😀" // F0 9F 98 80
	st := tok.NewStream(false)
	for i := 0; i < len(emoji); i++ {
		id, ok := tok.TokenID(string(byteToRune[emoji[i]]))
		if !ok {
			t.Fatalf("no token for byte %#x", emoji[i])
		}
		out := st.Add(id)
		if i < len(emoji)-1 && out != "" {
			t.Fatalf("after byte %d: emitted %q before the character was complete", i, out)
		}
		if i == len(emoji)-1 && out != emoji {
			t.Fatalf("complete: got %q", out)
		}
	}
	// An invalid continuation: the held lead byte becomes U+FFFD.
	lead, _ := tok.TokenID(string(byteToRune[0xE6]))
	a, _ := tok.TokenID("a")
	got := st.Add(lead) + st.Add(a) + st.Flush()
	if got != "\uFFFDa" {
		t.Errorf("lead byte then 'a': %q", got)
	}
}

func TestLossyMatchesMaximalSubparts(t *testing.T) {
	for in, want := range map[string]string{
		"\xe6\x97a":         "\uFFFDa", // one maximal subpart
		"\xff\xfe":          "\uFFFD\uFFFD",
		"\xed\xa0\x80":      "\uFFFD\uFFFD\uFFFD", // a surrogate: E0 A0 is not a valid start after ED
		"ok\xf0\x9f\x98":    "ok\uFFFD",
		"\xf0\x9f\x98\x80x": "😀x",
	} {
		if got := lossy([]byte(in)); got != want {
			t.Errorf("lossy(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSpecialTokens(t *testing.T) {
	tok := loadTiny(t)
	ids := tok.Encode("<|im_start|>user<|im_end|>")
	start, _ := tok.TokenID("<|im_start|>")
	end, _ := tok.TokenID("<|im_end|>")
	if ids[0] != start || ids[len(ids)-1] != end || !tok.IsSpecial(start) {
		t.Errorf("ids %v, want %d … %d", ids, start, end)
	}
	if got := tok.Decode(ids, true); got != "user" {
		t.Errorf("skipSpecial decode = %q", got)
	}
	if ord := tok.EncodeOrdinary("<|im_start|>"); len(ord) < 2 {
		t.Errorf("EncodeOrdinary kept the special token: %v", ord)
	}
	if tok.EOSToken != "<|im_end|>" || tok.ChatTemplate == "" {
		t.Errorf("tokenizer_config: eos %q template %q", tok.EOSToken, tok.ChatTemplate)
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		`{`,
		`{"model":{"type":"WordPiece","vocab":{}}}`,
		`{"model":{"type":"BPE","vocab":{"a":0},"merges":["ab"]}}`,
		`{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"normalizer":{"type":"Lowercase"}}`,
		`{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":{"type":"Split","pattern":{"Regex":"("},"behavior":"Isolated"}}`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s): no error", bad)
		}
	}
}

// FuzzRoundTrip: for any valid UTF-8 text, Decode(Encode(s)) is NFC(s),
// the stream agrees, and every id is in the vocabulary.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range hardStrings {
		f.Add(s)
	}
	tok := loadTiny(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip()
		}
		for _, id := range tok.Encode(s) {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("id %d out of range", id)
			}
		}
		checkRoundTrip(t, tok, s)
	})
}
