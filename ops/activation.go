package ops

// Activations of transformer feed-forward layers, element-wise:
//
//	SiLUMul:  out = silu(gate)·up = gate/(1 + exp(-gate))·up   (SwiGLU: Llama, Qwen)
//	GELU:     out = x/2·(1 + erf(x/√2))                         (exact GELU)
//	GELUTanh: out = x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³)))    (GPT-2's approximation)
//
// Shapes: gate, up, x, out [n], any layout (element-wise), T ∈ {float32,
// float16, bfloat16}; arithmetic in float32, one rounding to T.
//
// Accuracy: SiLU uses gpu.Exp (2 ulp) and a correctly rounded division.
// The GELUs use gpu.Erf and gpu.Tanh (4 ulp or 2^-22 absolute, devmath);
// for negative x, 1 + erf(…) cancels, so their error is bounded relative
// to |x| (about 2^-22·|x|), not to the (tiny) result — as for every
// float32 GELU written this way, PyTorch's included.
//
// Block: one element per thread, 256 per block: a memory-bound stream
// where more work per thread buys nothing the hardware's latency hiding
// does not already give.
//
// Versions: v1 only.

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// ---------------------------------------------------------------------------
// kernels

//kern:kernel block=256
func siluMulF32(t gpu.Thread, out, gate, up []float32) { siluMul(f32c{}, t, out, gate, up) }

//kern:kernel block=256
func siluMulF16(t gpu.Thread, out, gate, up []gpu.Half) { siluMul(f16c{}, t, out, gate, up) }

//kern:kernel block=256
func siluMulBF16(t gpu.Thread, out, gate, up []gpu.BFloat16) { siluMul(bf16c{}, t, out, gate, up) }

func siluMul[T any, C codec[T]](c C, t gpu.Thread, out, gate, up []T) {
	g, u := loadN(c, t, gate, len(out)), loadN(c, t, up, len(out))
	//kern:unroll
	for k := range perThread {
		g[k] = g[k] / (1 + gpu.Exp(-g[k])) * u[k]
	}
	storeN(c, t, out, g)
}

//kern:kernel block=256
func geluF32(t gpu.Thread, out, x []float32) { gelu(f32c{}, t, out, x) }

//kern:kernel block=256
func geluF16(t gpu.Thread, out, x []gpu.Half) { gelu(f16c{}, t, out, x) }

//kern:kernel block=256
func geluBF16(t gpu.Thread, out, x []gpu.BFloat16) { gelu(bf16c{}, t, out, x) }

func gelu[T any, C codec[T]](c C, t gpu.Thread, out, x []T) {
	v := loadN(c, t, x, len(out))
	//kern:unroll
	for k := range perThread {
		v[k] = 0.5 * v[k] * (1 + gpu.Erf(v[k]*sqrtHalf))
	}
	storeN(c, t, out, v)
}

//kern:kernel block=256
func geluTanhF32(t gpu.Thread, out, x []float32) { geluTanh(f32c{}, t, out, x) }

//kern:kernel block=256
func geluTanhF16(t gpu.Thread, out, x []gpu.Half) { geluTanh(f16c{}, t, out, x) }

//kern:kernel block=256
func geluTanhBF16(t gpu.Thread, out, x []gpu.BFloat16) { geluTanh(bf16c{}, t, out, x) }

func geluTanh[T any, C codec[T]](c C, t gpu.Thread, out, x []T) {
	v := loadN(c, t, x, len(out))
	//kern:unroll
	for k := range perThread {
		u := sqrt2OverPi * (v[k] + 0.044715*v[k]*v[k]*v[k])
		v[k] = 0.5 * v[k] * (1 + gpu.Tanh(u))
	}
	storeN(c, t, out, v)
}

const (
	sqrtHalf    = 0.70710678118654752440 // 1/√2
	sqrt2OverPi = 0.79788456080286535588 // √(2/π)
)

// ---------------------------------------------------------------------------
// Go API

var (
	siluMulK  = kset{siluMulF32Kernel.Kernel(), siluMulF16Kernel.Kernel(), siluMulBF16Kernel.Kernel()}
	geluK     = kset{geluF32Kernel.Kernel(), geluF16Kernel.Kernel(), geluBF16Kernel.Kernel()}
	geluTanhK = kset{geluTanhF32Kernel.Kernel(), geluTanhF16Kernel.Kernel(), geluTanhBF16Kernel.Kernel()}
)

// SiLUMul writes out = silu(gate)·up, the gated activation of a SwiGLU
// feed-forward layer; all four buffers hold n elements.
func SiLUMul[T Float](q kern.Queue, out, gate, up *kern.Buffer[T], n int) error {
	s := newShape("ops.SiLUMul")
	s.atLeast("n", n, 0)
	buf(s, "gate", gate, n, "n")
	buf(s, "up", up, n, "n")
	buf(s, "out", out, n, "n")
	return elementwise4(s, pick[T](siluMulK), q, n, bufArg(out), bufArg(gate), bufArg(up))
}

// GELU writes out = x/2·(1 + erf(x/√2)), the exact GELU; x and out hold n
// elements.
func GELU[T Float](q kern.Queue, out, x *kern.Buffer[T], n int) error {
	return unary(newShape("ops.GELU"), pick[T](geluK), q, out, x, n)
}

// GELUTanh writes the tanh approximation of GELU, x/2·(1 + tanh(√(2/π)·(x
// + 0.044715·x³))), as GPT-2 uses ("gelu_new", "gelu_pytorch_tanh").
func GELUTanh[T Float](q kern.Queue, out, x *kern.Buffer[T], n int) error {
	return unary(newShape("ops.GELUTanh"), pick[T](geluTanhK), q, out, x, n)
}

// unary checks and launches a kernel (out, x) over n elements.
func unary[A, B gpu.Elem](s *shape, k *kern.Kernel, q kern.Queue, out *kern.Buffer[B], x *kern.Buffer[A], n int) error {
	s.atLeast("n", n, 0)
	buf(s, "x", x, n, "n")
	buf(s, "out", out, n, "n")
	return elementwise4(s, k, q, n, bufArg(out), bufArg(x))
}

// perThread is the elements each thread of the streaming element-wise
// kernels (add, mul, scale, cast, the activations) moves: i, i+s, …,
// i+(perThread−1)·s for a grid of s threads, so every load instruction of
// a warp stays one contiguous 128-byte run (f32) and the loads of all
// perThread elements are issued before the first arithmetic waits on
// one. With one element per thread an H100 streamed Add at 73% of its
// DRAM peak (docs/performance-gpu.md): too few bytes in flight per SM.
const perThread = 4

// elementwise4 launches a perThread-elements-per-thread kernel over n
// elements.
func elementwise4(s *shape, k *kern.Kernel, q kern.Queue, n int, args ...kern.Arg) error {
	if s.err != nil || n == 0 {
		return s.err
	}
	return s.launch(k, q, kern.Cover((n+perThread-1)/perThread), args...)
}

// elementwise launches a one-element-per-thread kernel over n elements.
func elementwise(s *shape, k *kern.Kernel, q kern.Queue, n int, args ...kern.Arg) error {
	if s.err != nil || n == 0 {
		return s.err
	}
	return s.launch(k, q, kern.Cover(n), args...)
}
