// Package qwen3 runs Qwen3 dense models (Hugging Face checkpoints) on any
// kern device: the PTX emulator, native mode or a CUDA GPU.
//
// A token's path, file by file:
//
//	config.go    config.json / generation_config.json → Config (every shape)
//	weights.go   model.safetensors[.index.json] → device buffers, shapes checked
//	random.go    or random weights at a preset's shapes (for benchmarks)
//	gguf.go      or a Llama GGUF file (llm/gguf): metadata → Config, dequantised weights
//	model.go     Model, Load, Free
//	kvcache.go   the paged KV cache: a pool of pages, a page table per sequence
//	forward.go   Forward / ForwardBatch: rows of one or more sequences through
//	             embedding → layers (attention, SwiGLU MLP) → logits
//	kernels.go   the engine's own kernels: matmul (x·Wᵀ), per-row RoPE,
//	             KV-cache writes, paged attention, row gathers
//	matmul.go    the Matmul interface the forward pass calls, and its default
//	shard.go     a tensor-parallel rank's slice of the model (package llm/tp)
//
// The forward pass computes in float32 over weights kept in their file's
// type (bf16, f16 or f32), converted as they are loaded into registers:
// this is what the reference logits (fp32 compute over bf16 weights) are
// computed with, so the engine is checked against them to 2e-3 relative.
// Norms, SwiGLU, residual adds, casts and the embedding gather are package
// ops' kernels; matrix multiplies go through the Matmul interface so a
// faster kernel (tensor cores) can replace the simple one here without
// touching the model; attention is a warp per (row, head) over the
// sequence's cache pages, the simplest correct kernel, until a
// flash-attention op lands.
//
// Everything the model's shape depends on comes from config.json:
// head_dim (which may differ from hidden/heads), the number of KV heads
// (grouped-query attention: query head h reads KV head h/(heads/kv_heads)),
// the QK-norm weights, rope_theta, rms_norm_eps, and tied or untied
// embeddings (a tied model's lm_head is its embedding matrix).
package qwen3

//go:generate go run github.com/gokern/kern/cmd/kern gen
