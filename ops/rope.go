package ops

// Rotary position embedding (RoPE), rotate-half / NeoX layout, as
// Hugging Face's Llama, Qwen2 and Qwen3 apply it to q and k:
//
//	half = headDim/2, for i < half, with p = posOffset + token:
//	  a = p · theta^(-2i/headDim)
//	  out[i]      = x[i]·cos a - x[i+half]·sin a
//	  out[i+half] = x[i+half]·cos a + x[i]·sin a
//
// Shapes: x, out [tokens, heads, headDim], row-major (a head vector is
// contiguous), T ∈ {float32, float16, bfloat16}; headDim even. Token t
// sits at position posOffset + t (posOffset is the KV-cache length when
// decoding). (The "interleaved" GPT-J layout, pairs (2i, 2i+1), and
// rope scaling such as Llama 3.1's are not implemented.)
//
// The angle is computed in float64. A float32 angle is not accurate
// enough: at position 32768 one float32 ulp of the angle is 2^-8 rad, and
// a float32 inverse frequency's rounding (2^-24 relative) alone moves
// the angle by 2^-9 rad, turning into errors of about 0.2% of the
// rotated vector. So each thread forms theta^(-2i/headDim) as r^i by
// repeated squaring of r = theta^(-2/headDim) (computed once on the host
// with math.Pow; relative error about 1e-14 at i = 256), multiplies by
// the position, and reduces the angle to [-π, π] in float64 with 2π
// split in two parts. Only then is it rounded to float32 (error ≤ 2^-23
// rad), where gpu.Sin and gpu.Cos are accurate to 2^-20 absolute. The
// result: |out - exact| ≲ 2^-19·(|x[i]| + |x[i+half]|) for positions up
// to 2^24, where HF's float32 formula loses about 1e-3 at 32k.
//
// Block: one thread per rotated pair (tokens·heads·headDim/2 threads,
// 256 per block); each thread computes its own cos/sin (recomputing it
// per head costs a few float64 multiplies, much less than a second pass
// over memory to read a precomputed table would on a memory-bound op).
//
// Versions: v1 only.

import (
	"github.com/gokern/kern/internal/rotary"
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// ---------------------------------------------------------------------------
// kernels

//kern:kernel block=256
func ropeF32(t gpu.Thread, out, x []float32, heads, headDim, posOffset int, ratio float64) {
	rope(f32c{}, t, out, x, heads, headDim, posOffset, ratio)
}

//kern:kernel block=256
func ropeF16(t gpu.Thread, out, x []gpu.Half, heads, headDim, posOffset int, ratio float64) {
	rope(f16c{}, t, out, x, heads, headDim, posOffset, ratio)
}

//kern:kernel block=256
func ropeBF16(t gpu.Thread, out, x []gpu.BFloat16, heads, headDim, posOffset int, ratio float64) {
	rope(bf16c{}, t, out, x, heads, headDim, posOffset, ratio)
}

// rope rotates pair GlobalX: element i < half of head vector GlobalX/half.
func rope[T any, C codec[T]](c C, t gpu.Thread, out, x []T, heads, headDim, posOffset int, ratio float64) {
	half := headDim / 2
	g := t.GlobalX()
	if g >= len(x)/2 {
		return
	}
	// 32-bit divisions (RoPE refuses 2³² elements or more): a 64-bit one
	// is a subroutine of some 70 SASS instructions, and three of them
	// made this memory-bound op compute-bound (21% of an H100's DRAM
	// peak, docs/performance-gpu.md).
	u, h := uint32(g), uint32(half)
	i := int(u % h)
	vec := int(u / h) // token·heads + head
	sin, cos := rotary.SinCos(posOffset+int(uint32(vec)/uint32(heads)), i, ratio)
	lo := vec*headDim + i
	x1, x2 := c.load(x[lo]), c.load(x[lo+half])
	out[lo] = c.store(x1*cos - x2*sin)
	out[lo+half] = c.store(x2*cos + x1*sin)
}

// ---------------------------------------------------------------------------
// Go API

var ropeK = kset{ropeF32Kernel.Kernel(), ropeF16Kernel.Kernel(), ropeBF16Kernel.Kernel()}

// RoPE applies the rotary position embedding (rotate-half layout) to x
// ([tokens, heads, headDim], row-major), writing out (same shape). Token t
// has position posOffset + t; theta is the base (10000 for Llama 2, 500000
// for Llama 3, 1000000 for Qwen3). headDim must be even.
func RoPE[T Float](q kern.Queue, out, x *kern.Buffer[T], tokens, heads, headDim, posOffset int, theta float64) error {
	s := newShape("ops.RoPE")
	s.atLeast("tokens", tokens, 0)
	s.atLeast("heads", heads, 1)
	s.atLeast("headDim", headDim, 2)
	s.atLeast("posOffset", posOffset, 0)
	if headDim%2 != 0 {
		s.fail("headDim = %d, want an even number", headDim)
	}
	if !(theta > 1) || math.IsInf(theta, 0) {
		s.fail("theta = %g, want a finite base > 1", theta)
	}
	if posOffset+tokens > 1<<24 {
		s.fail("positions up to %d exceed 2^24, beyond RoPE's stated accuracy", posOffset+tokens)
	}
	n := s.mul(s.mul(tokens, heads), headDim)
	if n >= 1<<32 {
		s.fail("tokens×heads×headDim = %d: the kernel indexes in 32 bits, want fewer than 2^32 elements (split the call)", n)
	}
	buf(s, "x", x, n, "tokens×heads×headDim")
	buf(s, "out", out, n, "tokens×heads×headDim")
	if s.err != nil || tokens == 0 {
		return s.err
	}
	ratio := math.Pow(theta, -2/float64(headDim))
	return s.launch(pick[T](ropeK), q, kern.Cover(n/2), bufArg(out), bufArg(x), intArg(heads), intArg(headDim), intArg(posOffset), kern.ScalarArg(ratio))
}
