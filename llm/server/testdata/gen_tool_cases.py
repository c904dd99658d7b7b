#!/usr/bin/env python3
"""Render Qwen3's chat template with tools for the Go tests: writes tool_cases.json.

The template is llm/tokenizer/testdata/qwen3_chat_template.jinja (Qwen3's
tokenizer_config.json chat_template), rendered as transformers'
apply_chat_template does (see gen_chat_cases.py there): tools are passed
as the template's `tools` variable, assistant tool calls as OpenAI-style
tool_calls on the message.

Needs only jinja2. Run from this directory:
    python3 gen_tool_cases.py
"""
import json

from jinja2.sandbox import ImmutableSandboxedEnvironment

env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
env.filters["tojson"] = lambda x, **kw: json.dumps(x, ensure_ascii=False)
template = env.from_string(open("../../tokenizer/testdata/qwen3_chat_template.jinja").read())

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city, now.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "e.g. Zürich"},
                                                           "unit": {"type": "string", "enum": ["c", "f"]}},
                          "required": ["city"]}}}
TIME = {"type": "function", "function": {"name": "local_time", "description": "Time <now> & \"here\"",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}}}
SYS = {"role": "system", "content": "You are a helpful assistant."}
U1 = {"role": "user", "content": "Weather in Paris and the time in Tokyo?"}
CALLS = {"role": "assistant", "content": "",
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"c\"}"}},
                        {"id": "call_2", "type": "function",
                         "function": {"name": "local_time", "arguments": {"tz": "Asia/Tokyo", "n": [1, 2.5, True, None]}}}]}
CALLS_WITH_TEXT = {"role": "assistant", "content": "<think>\nTwo tools.\n</think>\n\nLet me check.",
                   "tool_calls": [{"id": "call_3", "type": "function",
                                   "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]}
T1 = {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"}
T2 = {"role": "tool", "tool_call_id": "call_2", "content": "09:41"}

CASES = [
    ("tools, system and user", [SYS, U1], [WEATHER, TIME], True, None),
    ("tools without system", [U1], [WEATHER], True, False),
    ("tool calls and responses", [SYS, U1, CALLS, T1, T2], [WEATHER, TIME], True, None),
    ("tool call after text, last turn", [U1, CALLS_WITH_TEXT], [WEATHER], False, None),
    ("tool call after text in history", [U1, CALLS_WITH_TEXT, T1, {"role": "user", "content": "Thanks"}], [WEATHER], True, None),
]

out = []
for name, msgs, tools, gen, think in CASES:
    kw = {"messages": msgs, "tools": tools, "add_generation_prompt": gen}
    if think is not None:
        kw["enable_thinking"] = think
    out.append({"name": name, "messages": msgs, "tools": tools, "add_generation_prompt": gen,
                "enable_thinking": think, "rendered": template.render(**kw)})
with open("tool_cases.json", "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
print(f"wrote {len(out)} cases")
