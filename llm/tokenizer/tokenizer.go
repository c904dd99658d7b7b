package tokenizer

// Loading tokenizer.json and tokenizer_config.json, and Encode/Decode.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// Tokenizer is a byte-level BPE tokenizer. It is safe for concurrent use.
type Tokenizer struct {
	vocab        map[string]int32
	tokens       []string // by id; added tokens' content included
	special      []bool   // by id: an added token marked special
	added        map[string]int32
	addedByFirst map[byte][]string // added tokens by first byte, longest first
	ranks        map[pair]int
	ignoreMerges bool
	unk          int32
	normalize    []norm.Form
	split        []*regexp2.Regexp // applied in order, each "isolated"
	cache        wordCache

	// From tokenizer_config.json (empty when absent).
	EOSToken, BOSToken, PadToken string
	ChatTemplate                 string
}

// fileJSON is the part of tokenizer.json this package reads.
type fileJSON struct {
	AddedTokens []struct {
		ID      int32  `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer   *component      `json:"normalizer"`
	PreTokenizer *component      `json:"pre_tokenizer"`
	Model        json.RawMessage `json:"model"`
}

// component is a normalizer or pre-tokenizer node.
type component struct {
	Type          string       `json:"type"`
	Normalizers   []*component `json:"normalizers"`
	Pretokenizers []*component `json:"pretokenizers"`
	Pattern       *struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior       string `json:"behavior"`
	Invert         bool   `json:"invert"`
	AddPrefixSpace bool   `json:"add_prefix_space"`
	UseRegex       bool   `json:"use_regex"`
}

type modelJSON struct {
	Type         string           `json:"type"`
	Vocab        map[string]int32 `json:"vocab"`
	Merges       []json.RawMessage
	UnkToken     *string `json:"unk_token"`
	IgnoreMerges bool    `json:"ignore_merges"`
	ByteFallback bool    `json:"byte_fallback"`
}

// gpt2Split is the ByteLevel pre-tokenizer's own regex (use_regex: true).
const gpt2Split = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// Load reads dir/tokenizer.json and, if present, dir/tokenizer_config.json.
func Load(dir string) (*Tokenizer, error) {
	path := filepath.Join(dir, "tokenizer.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	cpath := filepath.Join(dir, "tokenizer_config.json")
	craw, err := os.ReadFile(cpath)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("tokenizer: %w", err)
	default:
		if err := t.parseConfig(craw); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", cpath, err)
		}
	}
	return t, nil
}

// Parse builds a tokenizer from the contents of a tokenizer.json.
func Parse(raw []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("bad JSON: %v", err)
	}
	var m modelJSON
	if err := json.Unmarshal(f.Model, &m); err != nil {
		return nil, fmt.Errorf("model: %v", err)
	}
	if m.Type != "BPE" {
		return nil, fmt.Errorf("model type %q: only BPE is implemented", m.Type)
	}
	if m.ByteFallback {
		return nil, errors.New("model: byte_fallback BPE (SentencePiece style) is not implemented")
	}
	t := &Tokenizer{vocab: m.Vocab, added: map[string]int32{}, addedByFirst: map[byte][]string{},
		ranks: map[pair]int{}, ignoreMerges: m.IgnoreMerges, unk: -1}
	n := int32(0)
	for _, id := range m.Vocab {
		n = max(n, id+1)
	}
	for _, a := range f.AddedTokens {
		n = max(n, a.ID+1)
	}
	t.tokens = make([]string, n)
	t.special = make([]bool, n)
	for tok, id := range m.Vocab {
		if id < 0 {
			return nil, fmt.Errorf("model: token %q has negative id %d", tok, id)
		}
		t.tokens[id] = tok
	}
	for _, a := range f.AddedTokens {
		if a.Content == "" || a.ID < 0 {
			return nil, fmt.Errorf("added token %d: empty content or negative id", a.ID)
		}
		t.tokens[a.ID] = a.Content
		t.special[a.ID] = a.Special
		t.added[a.Content] = a.ID
		t.addedByFirst[a.Content[0]] = append(t.addedByFirst[a.Content[0]], a.Content)
	}
	for _, l := range t.addedByFirst {
		sort.Slice(l, func(i, j int) bool { return len(l[i]) > len(l[j]) })
	}
	if m.UnkToken != nil {
		id, ok := m.Vocab[*m.UnkToken]
		if !ok {
			return nil, fmt.Errorf("model: unk_token %q is not in the vocabulary", *m.UnkToken)
		}
		t.unk = id
	}
	for i, raw := range m.Merges {
		var a, b string
		var s string
		var p []string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			var ok bool
			if a, b, ok = strings.Cut(s, " "); !ok {
				return nil, fmt.Errorf("model: merge %d %q: want two symbols separated by a space", i, s)
			}
		case json.Unmarshal(raw, &p) == nil && len(p) == 2:
			a, b = p[0], p[1]
		default:
			return nil, fmt.Errorf("model: merge %d %s: want \"a b\" or [a, b]", i, raw)
		}
		if _, dup := t.ranks[pair{a, b}]; !dup {
			t.ranks[pair{a, b}] = i
		}
	}
	if err := t.setNormalizer(f.Normalizer); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	if err := t.setPreTokenizer(f.PreTokenizer); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	return t, nil
}

func (t *Tokenizer) setNormalizer(c *component) error {
	if c == nil {
		return nil
	}
	switch c.Type {
	case "Sequence":
		for _, s := range c.Normalizers {
			if err := t.setNormalizer(s); err != nil {
				return err
			}
		}
	case "NFC":
		t.normalize = append(t.normalize, norm.NFC)
	case "NFD":
		t.normalize = append(t.normalize, norm.NFD)
	case "NFKC":
		t.normalize = append(t.normalize, norm.NFKC)
	case "NFKD":
		t.normalize = append(t.normalize, norm.NFKD)
	default:
		return fmt.Errorf("type %q is not implemented", c.Type)
	}
	return nil
}

func (t *Tokenizer) setPreTokenizer(c *component) error {
	if c == nil {
		return nil
	}
	switch c.Type {
	case "Sequence":
		for _, s := range c.Pretokenizers {
			if err := t.setPreTokenizer(s); err != nil {
				return err
			}
		}
	case "Split":
		if c.Behavior != "Isolated" || c.Invert {
			return fmt.Errorf("Split with behavior %q invert %v: only Isolated is implemented", c.Behavior, c.Invert)
		}
		var expr string
		switch {
		case c.Pattern != nil && c.Pattern.Regex != nil:
			expr = *c.Pattern.Regex
		case c.Pattern != nil && c.Pattern.String != nil:
			expr = regexp2.Escape(*c.Pattern.String)
		default:
			return errors.New("Split without a pattern")
		}
		re, err := regexp2.Compile(expr, regexp2.Unicode)
		if err != nil {
			return fmt.Errorf("Split pattern %q: %v", expr, err)
		}
		t.split = append(t.split, re)
	case "ByteLevel":
		if c.AddPrefixSpace {
			return errors.New("ByteLevel with add_prefix_space is not implemented")
		}
		if c.UseRegex {
			t.split = append(t.split, regexp2.MustCompile(gpt2Split, regexp2.Unicode))
		}
	default:
		return fmt.Errorf("type %q is not implemented", c.Type)
	}
	return nil
}

func (t *Tokenizer) parseConfig(raw []byte) error {
	var c map[string]json.RawMessage
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("bad JSON: %v", err)
	}
	// A token is written as a string or as {"content": …}.
	tok := func(key string) string {
		var s string
		if json.Unmarshal(c[key], &s) == nil {
			return s
		}
		var o struct{ Content string }
		if json.Unmarshal(c[key], &o) == nil {
			return o.Content
		}
		return ""
	}
	t.EOSToken, t.BOSToken, t.PadToken = tok("eos_token"), tok("bos_token"), tok("pad_token")
	json.Unmarshal(c["chat_template"], &t.ChatTemplate)
	return nil
}

// VocabSize is one more than the largest token id.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// TokenID returns the id of a vocabulary or added token.
func (t *Tokenizer) TokenID(tok string) (int32, bool) {
	if id, ok := t.added[tok]; ok {
		return id, true
	}
	id, ok := t.vocab[tok]
	return id, ok
}

// Token returns the vocabulary string of id ("" if out of range).
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// IsSpecial reports whether id is an added token marked special.
func (t *Tokenizer) IsSpecial(id int32) bool {
	return id >= 0 && int(id) < len(t.special) && t.special[id]
}

// Encode returns text's token ids. Added tokens written in the text (such
// as "<|im_start|>") become their ids.
func (t *Tokenizer) Encode(text string) []int32 {
	var ids []int32
	start := 0
	for i := 0; i < len(text); {
		if tok := t.addedAt(text, i); tok != "" {
			ids = t.encodeOrdinary(ids, text[start:i])
			ids = append(ids, t.added[tok])
			i += len(tok)
			start = i
			continue
		}
		i++
	}
	return t.encodeOrdinary(ids, text[start:])
}

// EncodeOrdinary encodes text with added tokens treated as plain text.
func (t *Tokenizer) EncodeOrdinary(text string) []int32 {
	return t.encodeOrdinary(nil, text)
}

// addedAt returns the longest added token at text[i:], or "".
func (t *Tokenizer) addedAt(text string, i int) string {
	for _, tok := range t.addedByFirst[text[i]] {
		if strings.HasPrefix(text[i:], tok) {
			return tok
		}
	}
	return ""
}

func (t *Tokenizer) encodeOrdinary(dst []int32, text string) []int32 {
	if text == "" {
		return dst
	}
	for _, f := range t.normalize {
		text = f.String(text)
	}
	words := []string{text}
	for _, re := range t.split {
		var next []string
		for _, w := range words {
			next = splitIsolated(next, re, w)
		}
		words = next
	}
	for _, w := range words {
		dst = t.bpe(dst, byteLevel(w))
	}
	return dst
}

// splitIsolated appends to dst the pieces of s: each match of re, and
// each non-empty stretch between matches.
func splitIsolated(dst []string, re *regexp2.Regexp, s string) []string {
	runes := []rune(s)
	prev := 0 // in runes
	m, err := re.FindRunesMatch(runes)
	for err == nil && m != nil {
		if m.Length == 0 { // an empty match splits nothing
			m, err = re.FindNextMatch(m)
			continue
		}
		if m.Index > prev {
			dst = append(dst, string(runes[prev:m.Index]))
		}
		dst = append(dst, string(runes[m.Index:m.Index+m.Length]))
		prev = m.Index + m.Length
		m, err = re.FindNextMatch(m)
	}
	if prev < len(runes) {
		dst = append(dst, string(runes[prev:]))
	}
	return dst
}

// Decode returns the text of ids. With skipSpecial, special added tokens
// are left out. Ids outside the vocabulary are skipped.
func (t *Tokenizer) Decode(ids []int32, skipSpecial bool) string {
	return lossy(t.appendBytes(nil, ids, skipSpecial))
}

func (t *Tokenizer) appendBytes(dst []byte, ids []int32, skipSpecial bool) []byte {
	for _, id := range ids {
		if id < 0 || int(id) >= len(t.tokens) {
			continue
		}
		tok := t.tokens[id]
		if _, ok := t.added[tok]; ok && t.added[tok] == id {
			if !(skipSpecial && t.special[id]) {
				dst = append(dst, tok...)
			}
			continue
		}
		dst = unByteLevel(dst, tok)
	}
	return dst
}

// Stream decodes tokens one at a time, returning only whole characters:
// a UTF-8 sequence split across tokens is held back until it completes.
// The concatenation of every Add and the final Flush equals Decode of
// all the tokens.
type Stream struct {
	t           *Tokenizer
	skipSpecial bool
	pending     []byte
}

// NewStream starts a streaming decode.
func (t *Tokenizer) NewStream(skipSpecial bool) *Stream {
	return &Stream{t: t, skipSpecial: skipSpecial}
}

// Add decodes id and returns the text that is now complete.
func (s *Stream) Add(id int32) string {
	s.pending = s.t.appendBytes(s.pending, []int32{id}, s.skipSpecial)
	k := incompleteTail(s.pending)
	out := lossy(s.pending[:len(s.pending)-k])
	s.pending = append(s.pending[:0], s.pending[len(s.pending)-k:]...)
	return out
}

// Flush returns whatever is held back (an unfinished sequence becomes
// U+FFFD) and resets the stream.
func (s *Stream) Flush() string {
	out := lossy(s.pending)
	s.pending = s.pending[:0]
	return out
}
