// Package ops is kern's kernel library: the operations a transformer
// inference engine runs between its matrix multiplies, written in kern's
// kernel language and callable from Go on kern buffers.
//
// Every op is a Go function taking a kern.Queue, its output and input
// buffers, and its shape. It checks the shape before launching anything
// and returns an error naming the op and the argument on a mismatch; it
// never panics on bad input. Ops that make sense in 16-bit precision are
// generic over Float (float32, gpu.Half, gpu.BFloat16): 16-bit values are
// converted to float32 as they are loaded, every sum and product is
// carried in float32, and results are rounded once to the output type.
//
// The files, one per concept, each open with a header giving the math,
// every argument's shape and layout, the block shape and why, and the
// versions kept:
//
//	norm.go        RMSNorm, AddRMSNorm (residual add fused), HeadRMSNorm (QK-norm), LayerNorm
//	softmax.go     Softmax over rows of any length
//	rope.go        RoPE, rotate-half (NeoX) layout as in Llama and Qwen
//	activation.go  SwiGLU (SiLU·mul), GELU (erf) and GELUTanh
//	elementwise.go Add, Mul, Scale, Cast between float32, float16 and bfloat16
//	embed.go       Embedding row gather with device-checked token ids
//	argmax.go      Argmax over rows (two stages, ties to the lowest index)
//	sample.go      top-k / top-p / temperature sampling with a seed
//	topk.go        TopK, TopKPacked (TopKPairs unpacks): each row's k largest, sorted, a sampler's candidates (internal/topk)
//	quant.go       INT8 (per tensor, per channel), INT4 (group 128) and 6-bit dequant
//	matmul.go      Matmul on the tensor cores with fused epilogues, decode GEMV
//	               (kernels in internal/mm, internal/gemvtc; v1 GEMV internal/gemv;
//	               the GEMVs' shared device code, a kernel library, internal/gemvdev)
//	matmul_norm.go MatmulOpts.RMSNorm: the input rows' RMSNorm fused into the decode
//	               GEMV (internal/gemvnorm), or launched before the product
//	matmul_w4.go   MatmulInt4, W4A16: decode GEMV (internal/w4), prefill GEMM (internal/w4mm)
//	matmul_i8.go   MatmulInt8, W8A8 on mma m16n8k32 s8, v1 and pipelined v2 (internal/i8)
//	flash.go       FlashAttention prefill on tensor cores (varlen, causal, GQA)
//	flash_bwd.go   FlashAttentionBackward (dQ, dK, dV from the LSE; v2 on tensor cores, v1 on CUDA cores)
//	paged.go       PagedAttention decode over a paged KV cache, split-K
//	kvcache.go     the page allocator and KVCacheWrite (append rows, RoPE fused)
//
// The kernels of the large ops live in packages of their own under
// internal/, so that their large unrolled PTX gets generated files of its
// own. The plumbing shared by all of them lives in dtype.go (element codecs
// and the per-type kernel tables), shape.go (argument checks) and
// reduce.go (the arg-max block reduction).
//
// # Versions
//
// Following llm.c's dev/cuda, an op may keep more than one kernel
// ("versions"), each described in its file's header. The exported
// function picks the version for the shape; the tests check every
// version against a float64 reference on the emulator and in native mode.
//
// # Aliasing
//
// kern refuses a launch whose written buffer overlaps another argument,
// so no op works in place: pass a distinct output buffer.
package ops

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen
