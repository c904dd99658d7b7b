package server

// Tool calling with Qwen3's conventions, as its chat template and vLLM's
// hermes tool parser have them.
//
// In: a request's tools are rendered into the system turn, one JSON
// object a line between <tools> tags, followed by the instruction to
// answer calls in <tool_call> tags (the template's exact text); an
// assistant message's tool_calls are rendered after its content as
// <tool_call>\n{"name": …, "arguments": …}\n</tool_call> blocks. JSON is
// written as the template's tojson writes it (Python's json.dumps: ", "
// and ": " separators, keys in their given order, non-ASCII kept).
//
// Out: <tool_call> blocks in the reply's content become
// message.tool_calls (arguments as a JSON string), the text before them
// stays content, and finish_reason becomes "tool_calls". A block that is
// not valid JSON leaves the whole reply as content. Streamed, content
// flows until a <tool_call> tag may be starting; each complete block is
// then sent as one tool_calls delta (index, id, type, name and the whole
// arguments string).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gokern/kern/llm/tokenizer"
)

const (
	toolOpen  = "<tool_call>"
	toolClose = "</tool_call>"
)

// chatInMessage is a request message: tokenizer.Message plus the fields
// of tool calling.
type chatInMessage struct {
	Role             string       `json:"role"`
	Content          string       `json:"content"`
	ReasoningContent *string      `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallIn `json:"tool_calls,omitempty"`
	ToolCallID       string       `json:"tool_call_id,omitempty"`
}

type toolCallIn struct {
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // a JSON string or an object
	} `json:"function"`
}

// toolCall is a call in a response.
type toolCall struct {
	Index    *int   `json:"index,omitempty"` // streamed deltas only
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// renderMessages turns request messages and tools into the template's
// input.
func renderMessages(in []chatInMessage, tools []json.RawMessage) ([]tokenizer.Message, error) {
	out := make([]tokenizer.Message, 0, len(in)+1)
	for i, m := range in {
		tm := tokenizer.Message{Role: m.Role, Content: m.Content, ReasoningContent: m.ReasoningContent}
		if len(m.ToolCalls) > 0 {
			visible := m.Content // the template's content after the think block
			if k := strings.LastIndex(visible, "</think>"); k >= 0 && m.ReasoningContent == nil {
				visible = strings.TrimLeft(visible[k+len("</think>"):], "\n")
			}
			var b strings.Builder
			b.WriteString(m.Content)
			for k, c := range m.ToolCalls {
				if k > 0 || visible != "" {
					b.WriteString("\n")
				}
				args, err := toolArguments(c.Function.Arguments)
				if err != nil {
					return nil, fmt.Errorf("message %d, tool call %d: %v", i, k, err)
				}
				b.WriteString(toolOpen + "\n{\"name\": \"" + c.Function.Name + "\", \"arguments\": " + args + "}\n" + toolClose)
			}
			tm.Content = b.String()
		}
		out = append(out, tm)
	}
	if len(tools) == 0 {
		return out, nil
	}
	var b strings.Builder
	if len(out) > 0 && out[0].Role == "system" {
		b.WriteString(out[0].Content + "\n\n")
		out = out[1:]
	}
	b.WriteString("# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>")
	for i, t := range tools {
		s, err := pyJSON(t)
		if err != nil {
			return nil, fmt.Errorf("tool %d: %v", i, err)
		}
		b.WriteString("\n" + s)
	}
	b.WriteString("\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>")
	return append([]tokenizer.Message{{Role: "system", Content: b.String()}}, out...), nil
}

// toolArguments renders a call's arguments as the template does: a
// string as it is, anything else as tojson.
func toolArguments(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	if len(raw) == 0 {
		return "{}", nil
	}
	return pyJSON(raw)
}

// pyJSON re-writes JSON as Python's json.dumps(ensure_ascii=False) does:
// ", " between items, ": " after keys, keys in the given order, numbers
// as written.
func pyJSON(raw json.RawMessage) (string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var b strings.Builder
	var write func() error
	write = func() error {
		t, err := d.Token()
		if err != nil {
			return err
		}
		switch v := t.(type) {
		case json.Delim:
			closer := "]"
			if v == '{' {
				closer = "}"
			}
			b.WriteByte(byte(v))
			for n := 0; d.More(); n++ {
				if n > 0 {
					b.WriteString(", ")
				}
				if v == '{' {
					k, err := d.Token()
					if err != nil {
						return err
					}
					b.WriteString(pyString(k.(string)) + ": ")
				}
				if err := write(); err != nil {
					return err
				}
			}
			if _, err := d.Token(); err != nil {
				return err
			}
			b.WriteString(closer)
		case string:
			b.WriteString(pyString(v))
		case json.Number:
			b.WriteString(v.String())
		case bool:
			fmt.Fprint(&b, v)
		case nil:
			b.WriteString("null")
		}
		return nil
	}
	if err := write(); err != nil {
		return "", fmt.Errorf("bad JSON: %v", err)
	}
	return b.String(), nil
}

// pyString quotes s as json.dumps(ensure_ascii=False) does.
func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// parseToolCall reads one block's JSON: {"name": …, "arguments": …}.
func parseToolCall(body string) (name, args string, ok bool) {
	var c struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(body)), &c) != nil || c.Name == "" {
		return "", "", false
	}
	if len(c.Arguments) == 0 {
		return c.Name, "{}", true
	}
	a, err := pyJSON(c.Arguments)
	if err != nil {
		return "", "", false
	}
	return c.Name, a, true
}

// parseToolCalls splits a reply into content and tool calls.
func parseToolCalls(text, idPrefix string) (string, []toolCall) {
	i := strings.Index(text, toolOpen)
	if i < 0 {
		return text, nil
	}
	content, rest := strings.TrimRight(text[:i], " \n"), text[i:]
	var calls []toolCall
	for {
		rest = strings.TrimLeft(rest, " \n")
		if rest == "" {
			return content, calls
		}
		body, ok := strings.CutPrefix(rest, toolOpen)
		if !ok {
			return text, nil // text after the calls: not a well-formed reply
		}
		end := strings.Index(body, toolClose)
		if end < 0 {
			return text, nil
		}
		name, args, ok := parseToolCall(body[:end])
		if !ok {
			return text, nil
		}
		calls = append(calls, newToolCall(idPrefix, len(calls), name, args))
		rest = body[end+len(toolClose):]
	}
}

func newToolCall(idPrefix string, i int, name, args string) toolCall {
	c := toolCall{ID: fmt.Sprintf("%s-tool-%d", idPrefix, i), Type: "function"}
	c.Function.Name, c.Function.Arguments = name, args
	return c
}

// toolStreamer routes streamed content to content deltas and tool calls.
type toolStreamer struct {
	idPrefix string
	held     string // text that may begin a tag, or an open block
	inside   bool
	n        int // calls sent
	broken   bool
}

// add takes content and returns what can be sent now as content, and
// completed calls.
func (s *toolStreamer) add(piece string) (string, []toolCall) {
	s.held += piece
	if s.broken {
		out := s.held
		s.held = ""
		return out, nil
	}
	var content string
	var calls []toolCall
	for {
		if !s.inside {
			if i := strings.Index(s.held, toolOpen); i >= 0 {
				if s.n == 0 {
					content += strings.TrimRight(s.held[:i], " \n")
				}
				s.held, s.inside = s.held[i+len(toolOpen):], true
				continue
			}
			keep := 0 // a suffix that may begin <tool_call>, or whitespace between calls
			for k := min(len(toolOpen)-1, len(s.held)); k > 0; k-- {
				if strings.HasPrefix(toolOpen, s.held[len(s.held)-k:]) {
					keep = k
					break
				}
			}
			out := s.held[:len(s.held)-keep]
			if t := strings.TrimRight(out, " \n"); t != out { // trailing newlines wait: they may precede a call
				keep += len(out) - len(t)
				out = t
			}
			if s.n > 0 && out != "" {
				s.broken = true // text after a call: send it as it is
			}
			content += out
			s.held = s.held[len(out):]
			return content, calls
		}
		end := strings.Index(s.held, toolClose)
		if end < 0 {
			return content, calls
		}
		name, args, ok := parseToolCall(s.held[:end])
		if !ok {
			s.broken, s.inside = true, false
			out := toolOpen + s.held
			s.held = ""
			return content + out, calls
		}
		c := newToolCall(s.idPrefix, s.n, name, args)
		idx := s.n
		c.Index = &idx
		calls = append(calls, c)
		s.n++
		s.held, s.inside = s.held[end+len(toolClose):], false
	}
}

// flush returns what is held at the end of the reply.
func (s *toolStreamer) flush() string {
	out := s.held
	if s.inside {
		out = toolOpen + out // an unterminated block: plain text after all
	} else if s.n > 0 {
		out = strings.TrimLeft(out, " \n")
	}
	s.held = ""
	return out
}
