package tokenizer

// Plain ChatML with a default system prompt: SmolLM2's chat template.
// Its Jinja source is recognised by exact match (smolLM2Template) rather
// than interpreted; RenderChat falls back to Qwen3's template for any
// other, which is what the engine ran before GGUF models.

import "strings"

// smolLM2System is the system turn SmolLM2's template adds when the
// conversation does not start with one.
const smolLM2System = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"

// smolLM2Template is SmolLM2-Instruct's chat_template, as its
// tokenizer_config.json and its GGUF's tokenizer.chat_template have it.
const smolLM2Template = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}" +
	"{{ '<|im_start|>system\n" + smolLM2System + "<|im_end|>\n' }}{% endif %}" +
	"{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}" +
	"{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

// RenderChatML renders messages as ChatML turns; defaultSystem, if not
// empty, opens a conversation that has no system message of its own.
func RenderChatML(msgs []Message, defaultSystem string, addGenerationPrompt bool) string {
	var b strings.Builder
	for i, m := range msgs {
		if i == 0 && m.Role != "system" && defaultSystem != "" {
			b.WriteString("<|im_start|>system\n" + defaultSystem + "<|im_end|>\n")
		}
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	if addGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.String()
}

// RenderChat renders messages with the tokenizer's own chat template when
// it is one this package implements in Go (SmolLM2's), else with Qwen3's.
func (t *Tokenizer) RenderChat(msgs []Message, opt ChatOptions) string {
	if t.ChatTemplate == smolLM2Template {
		return RenderChatML(msgs, smolLM2System, opt.AddGenerationPrompt)
	}
	return RenderQwen3Chat(msgs, opt)
}
