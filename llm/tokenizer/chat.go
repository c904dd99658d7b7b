package tokenizer

// Qwen3's ChatML chat template, written in Go. It renders what the
// chat_template of Qwen3's tokenizer_config.json renders through
// transformers' apply_chat_template (testdata/chat_cases.json, made by
// testdata/gen_chat_cases.py with jinja2, is the check), for system,
// user, assistant and tool messages; tool definitions and assistant
// tool_calls are not rendered.
//
// The rules the template encodes:
//   - a leading system message opens the prompt; later ones render as turns;
//   - the "last query" is the last user message that is not a wrapped
//     <tool_response>; assistant turns before it lose their reasoning
//     (<think>…</think> is cut from the content), turns after it keep it
//     (the final one always gets a <think> block, empty or not);
//   - consecutive tool messages share one user turn of <tool_response>s;
//   - the generation prompt is "<|im_start|>assistant\n", followed by an
//     empty "<think>\n\n</think>\n\n" when thinking is off, which is how
//     Qwen3 is told to answer without reasoning.

import "strings"

// Message is one chat turn. ReasoningContent, if non-nil, is an
// assistant's reasoning given separately from Content.
type Message struct {
	Role             string  `json:"role"`
	Content          string  `json:"content"`
	ReasoningContent *string `json:"reasoning_content,omitempty"`
}

// ChatOptions are the template's variables.
type ChatOptions struct {
	AddGenerationPrompt bool
	// DisableThinking is enable_thinking=false (thinking is on by default).
	DisableThinking bool
}

// RenderQwen3Chat renders messages with Qwen3's chat template.
func RenderQwen3Chat(msgs []Message, opt ChatOptions) string {
	var b strings.Builder
	if len(msgs) > 0 && msgs[0].Role == "system" {
		b.WriteString("<|im_start|>system\n" + msgs[0].Content + "<|im_end|>\n")
	}
	lastQuery := len(msgs) - 1
	for i := len(msgs) - 1; i >= 0; i-- {
		c := msgs[i].Content
		if msgs[i].Role == "user" && !(strings.HasPrefix(c, "<tool_response>") && strings.HasSuffix(c, "</tool_response>")) {
			lastQuery = i
			break
		}
	}
	for i, m := range msgs {
		content := m.Content
		switch {
		case m.Role == "user" || (m.Role == "system" && i != 0):
			b.WriteString("<|im_start|>" + m.Role + "\n" + content + "<|im_end|>\n")
		case m.Role == "assistant":
			reasoning := ""
			if m.ReasoningContent != nil {
				reasoning = *m.ReasoningContent
			} else if strings.Contains(content, "</think>") {
				before, _, _ := strings.Cut(content, "</think>")
				before = strings.TrimRight(before, "\n")
				if k := strings.LastIndex(before, "<think>"); k >= 0 {
					before = before[k+len("<think>"):]
				}
				reasoning = strings.TrimLeft(before, "\n")
				content = strings.TrimLeft(content[strings.LastIndex(content, "</think>")+len("</think>"):], "\n")
			}
			last := i == len(msgs)-1
			if i > lastQuery && (last || reasoning != "") {
				b.WriteString("<|im_start|>" + m.Role + "\n<think>\n" + strings.Trim(reasoning, "\n") + "\n</think>\n\n" + strings.TrimLeft(content, "\n"))
			} else {
				b.WriteString("<|im_start|>" + m.Role + "\n" + content)
			}
			b.WriteString("<|im_end|>\n")
		case m.Role == "tool":
			if i == 0 || msgs[i-1].Role != "tool" {
				b.WriteString("<|im_start|>user")
			}
			b.WriteString("\n<tool_response>\n" + content + "\n</tool_response>")
			if i == len(msgs)-1 || msgs[i+1].Role != "tool" {
				b.WriteString("<|im_end|>\n")
			}
		}
	}
	if opt.AddGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
		if opt.DisableThinking {
			b.WriteString("<think>\n\n</think>\n\n")
		}
	}
	return b.String()
}
