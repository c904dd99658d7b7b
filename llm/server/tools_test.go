package server

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/tokenizer"
)

type toolCase struct {
	Name                string            `json:"name"`
	Messages            []chatInMessage   `json:"messages"`
	Tools               []json.RawMessage `json:"tools"`
	AddGenerationPrompt bool              `json:"add_generation_prompt"`
	EnableThinking      *bool             `json:"enable_thinking"`
	Rendered            string            `json:"rendered"`
}

// toolCases are Qwen3's chat template's renderings with tools
// (testdata/gen_tool_cases.py).
func toolCases(t *testing.T) []toolCase {
	t.Helper()
	b, err := os.ReadFile("testdata/tool_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []toolCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

func render(t *testing.T, c toolCase) string {
	t.Helper()
	msgs, err := renderMessages(c.Messages, c.Tools)
	if err != nil {
		t.Fatal(err)
	}
	return tokenizer.RenderQwen3Chat(msgs, tokenizer.ChatOptions{AddGenerationPrompt: c.AddGenerationPrompt,
		DisableThinking: c.EnableThinking != nil && !*c.EnableThinking})
}

// TestToolRendering: tools and tool calls render as the template does.
func TestToolRendering(t *testing.T) {
	for _, c := range toolCases(t) {
		if got := render(t, c); got != c.Rendered {
			t.Errorf("%s:\ngot  %q\nwant %q", c.Name, got, c.Rendered)
		}
	}
}

// assistantTurns are the assistant turns of a rendering that call tools.
func assistantTurns(rendered string) []string {
	var out []string
	for _, part := range strings.Split(rendered, "<|im_start|>assistant\n")[1:] {
		turn, _, _ := strings.Cut(part, "<|im_end|>")
		if strings.Contains(turn, toolOpen) {
			out = append(out, turn)
		}
	}
	return out
}

// wantCalls are a message's tool calls as a reply should report them.
func wantCalls(t *testing.T, m chatInMessage) []string {
	var out []string
	for _, c := range m.ToolCalls {
		args, err := toolArguments(c.Function.Arguments)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c.Function.Name+" "+args)
	}
	return out
}

func callStrings(cs []toolCall) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Function.Name+" "+c.Function.Arguments)
	}
	return out
}

// TestToolCallParsing parses the assistant turns of the template's
// renderings back into the tool calls they were rendered from, whole and
// streamed in pieces (token by token through the tokenizer's stream, and
// in random byte runs).
func TestToolCallParsing(t *testing.T) {
	tok, err := tokenizer.Load(fixture.QwenTokenizer(t)) // Qwen3's own: its added tokens matter
	if err != nil {
		t.Fatal(err)
	}
	// The engine streams text with special tokens skipped: <tool_call>
	// and <think> must survive that.
	for _, tag := range []string{toolOpen, toolClose, thinkOpen, thinkClose} {
		if ids := tok.Encode(tag); len(ids) != 1 || tok.Decode(ids, true) != tag {
			t.Errorf("%s encodes to %v, decodes (skipping special tokens) to %q", tag, ids, tok.Decode(ids, true))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for _, c := range toolCases(t) {
		var callers []chatInMessage
		for _, m := range c.Messages {
			if len(m.ToolCalls) > 0 {
				callers = append(callers, m)
			}
		}
		turns := assistantTurns(c.Rendered)
		if len(turns) != len(callers) {
			t.Fatalf("%s: %d assistant turns with calls, %d messages", c.Name, len(turns), len(callers))
		}
		for i, turn := range turns {
			n++
			want := wantCalls(t, callers[i])
			reasoning, content := splitReasoning(turn)
			gotContent, calls := parseToolCalls(content, "id")
			if fmt.Sprint(callStrings(calls)) != fmt.Sprint(want) {
				t.Errorf("%s turn %d: calls %q, want %q", c.Name, i, callStrings(calls), want)
			}
			wantContent := callers[i].Content
			if k := strings.LastIndex(wantContent, thinkClose); k >= 0 {
				wantContent = strings.TrimLeft(wantContent[k+len(thinkClose):], "\n")
			}
			if gotContent != wantContent {
				t.Errorf("%s turn %d: content %q, want %q (reasoning %q)", c.Name, i, gotContent, wantContent, reasoning)
			}
			// Streamed: token by token, and in random runs of bytes.
			var tokPieces []string
			st := tok.NewStream(true)
			for _, id := range tok.Encode(turn) {
				tokPieces = append(tokPieces, st.Add(id))
			}
			tokPieces = append(tokPieces, st.Flush())
			var runs []string
			for rest := turn; rest != ""; {
				k := min(len(rest), 1+rng.IntN(7))
				runs = append(runs, rest[:k])
				rest = rest[k:]
			}
			for _, pieces := range [][]string{tokPieces, runs} {
				var sp thinkSplitter
				ts := toolStreamer{idPrefix: "id"}
				var r, cnt strings.Builder
				var got []toolCall
				feed := func(rr, cc string) {
					r.WriteString(rr)
					c2, cs := ts.add(cc)
					cnt.WriteString(c2)
					for k, x := range cs {
						if x.Index == nil || *x.Index != len(got)+k {
							t.Errorf("call index %v, want %d", x.Index, len(got)+k)
						}
					}
					got = append(got, cs...)
				}
				for _, p := range pieces {
					feed(sp.add(p))
				}
				feed(sp.flush())
				cnt.WriteString(ts.flush())
				if fmt.Sprint(callStrings(got)) != fmt.Sprint(want) || cnt.String() != gotContent || r.String() != reasoning {
					t.Errorf("%s turn %d streamed in %d pieces: calls %q content %q reasoning %q; want %q %q %q",
						c.Name, i, len(pieces), callStrings(got), cnt.String(), r.String(), want, gotContent, reasoning)
				}
			}
		}
	}
	if n < 3 {
		t.Errorf("only %d tool-calling turns tested", n)
	}
}

// TestToolCallMalformed: blocks that are not calls stay content.
func TestToolCallMalformed(t *testing.T) {
	for _, text := range []string{
		"<tool_call>\nnot json\n</tool_call>",
		"<tool_call>\n{\"name\": \"f\", \"arguments\": {}}",                                   // unterminated
		"<tool_call>\n{\"arguments\": {}}\n</tool_call>",                                      // no name
		"<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\nand then some text", // text after
	} {
		content, calls := parseToolCalls(text, "id")
		if len(calls) != 0 || content != text {
			t.Errorf("%q: content %q calls %v; want all content", text, content, calls)
		}
		ts := toolStreamer{idPrefix: "id"}
		var b strings.Builder
		var n int
		for _, r := range text {
			c, cs := ts.add(string(r))
			b.WriteString(c)
			n += len(cs)
		}
		b.WriteString(ts.flush())
		if strings.Contains(text, "some text") {
			continue // streamed, the call went out before the text came
		}
		if n != 0 || b.String() != text {
			t.Errorf("%q streamed: content %q, %d calls", text, b.String(), n)
		}
	}
}

// TestToolsRequest: a chat request with tools and a tool-call history,
// as JSON over the wire, becomes the prompt the template renders.
func TestToolsRequest(t *testing.T) {
	_, srv := newServer(t, 8)
	for _, c := range toolCases(t) {
		if !c.AddGenerationPrompt {
			continue
		}
		body, _ := json.Marshal(map[string]any{"messages": c.Messages, "tools": c.Tools,
			"chat_template_kwargs": map[string]any{"enable_thinking": c.EnableThinking == nil || *c.EnableThinking}})
		var req chatRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		prompt, aerr := chatPrompt(srv.Engine, &req)
		if aerr != nil {
			t.Fatalf("%s: %v", c.Name, aerr)
		}
		if want := srv.Engine.Tok.Encode(c.Rendered); fmt.Sprint(prompt) != fmt.Sprint(want) {
			t.Errorf("%s: prompt %d tokens, the template's rendering %d", c.Name, len(prompt), len(want))
		}
		if !req.parseTools {
			t.Errorf("%s: tool calls not parsed", c.Name)
		}
	}
}
