// Package tokenizer implements the byte-level BPE tokenizers of Hugging
// Face's tokenizer.json (GPT-2 style, as Qwen2 and Qwen3 use), and Qwen3's
// ChatML chat template.
//
// Encoding, as the tokenizers library does it:
//
//  1. Added tokens (<|im_start|>, <|endoftext|>, …) are found in the raw
//     text first, leftmost-longest, and become their ids directly.
//  2. Each stretch between them is normalized (NFC for Qwen).
//  3. The pre-tokenizer's regex splits it into words (Qwen's pattern
//     separates letters, single digits, punctuation runs and whitespace;
//     it needs lookahead, hence github.com/dlclark/regexp2, not regexp).
//  4. Each word's UTF-8 bytes map to printable characters (bytes.go, the
//     GPT-2 table), and BPE merges adjacent symbols lowest rank first
//     until no ranked pair is left (bpe.go).
//
// Decoding maps tokens back to bytes, and the bytes to text with each
// invalid UTF-8 subpart replaced by U+FFFD as Rust's from_utf8_lossy does.
// A Stream decodes token by token and holds back a trailing incomplete
// UTF-8 sequence, so a character split over two tokens (common for CJK
// and emoji) is never printed in halves.
package tokenizer
