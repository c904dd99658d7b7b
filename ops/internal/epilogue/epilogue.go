//kern:library

// Package epilogue is ops.Matmul's epilogue as device code: bias, an
// activation (SiLU, GELU, or SwiGLU of an interleaved gate/up pair), a
// residual, and one rounding to the output type, all in float32 in that
// order. The sm_80 GEMM (ops/internal/mm), the Hopper GEMMs (mmh, mmhw)
// and the decode GEMVs (gemv, gemvtc, gemv3 and gemvnorm) store their
// accumulators through it, so every path gives identical results for
// identical accumulators. As a kernel library (compiler/library.go) it is
// inlined into each kernel package from this one source.
package epilogue

import "github.com/gokern/kern/gpu"

// The activations: the values of ops.Activation and of every matmul
// kernel's act argument.
const (
	None   = 0
	SiLU   = 1
	GELU   = 2
	SwiGLU = 3 // columns 2j, 2j+1 are gate_j, up_j; stores silu(gate)·up at column j
)

// Out is an output element type: its conversion to float32 and its
// rounding from it (to nearest even).
type Out[T any] interface {
	Load(T) float32
	Store(float32) T
}

// F32, Half and BFloat16 are Out for float32, gpu.Half and gpu.BFloat16.
type (
	F32      struct{}
	Half     struct{}
	BFloat16 struct{}
)

func (F32) Load(x float32) float32           { return x }
func (F32) Store(v float32) float32          { return v }
func (Half) Load(x gpu.Half) float32         { return x.Float32() }
func (Half) Store(v float32) gpu.Half        { return gpu.ToHalf(v) }
func (BFloat16) Load(x gpu.BFloat16) float32 { return x.Float32() }
func (BFloat16) Store(v float32) gpu.BFloat16 {
	return gpu.ToBFloat16(v)
}

// Pair finishes the pair C[row][col], C[row][col+1] (col even) of
// float32 accumulators v0, v1: bias, activation, residual, one rounding to
// O. bias has n elements or none, res the elements of c or none. With
// SwiGLU, c and res are [m, n/2] and the pair is gate, up of output col/2.
func Pair[O any, CO Out[O]](co CO, c, bias, res []O, row, col, m, n, act int, v0, v1 float32) {
	if row < m && col < n {
		has1 := col+1 < n
		i := row*n + col
		if act == SwiGLU {
			i = row*(n>>1) + col>>1
		}
		// Every load comes before the first store. c may be res (x +=
		// W·y), so no load after a store can move above it, and the warp
		// would wait a round trip for each in turn.
		var b0, b1, r0, r1 float32
		if len(bias) > 0 {
			b0 = co.Load(bias[col])
			if has1 {
				b1 = co.Load(bias[col+1])
			}
		}
		if len(res) > 0 {
			r0 = co.Load(res[i])
			if has1 && act != SwiGLU {
				r1 = co.Load(res[i+1])
			}
		}
		if len(bias) > 0 {
			v0 += b0
			if has1 {
				v1 += b1
			}
		}
		if act == SwiGLU {
			v := silu(v0) * v1
			if len(res) > 0 {
				v += r0
			}
			c[i] = co.Store(v)
		} else {
			v0 = Act(v0, act)
			if len(res) > 0 {
				v0 += r0
			}
			c[i] = co.Store(v0)
			if has1 {
				v1 = Act(v1, act)
				if len(res) > 0 {
					v1 += r1
				}
				c[i+1] = co.Store(v1)
			}
		}
	}
}

// One finishes C[row][col] from the float32 accumulator v: bias,
// activation (not SwiGLU, which takes a pair), residual, one rounding to
// O.
func One[O any, CO Out[O]](co CO, c, bias, res []O, row, col, m, n, act int, v float32) {
	if row < m && col < n {
		if len(bias) > 0 {
			v += co.Load(bias[col])
		}
		v = Act(v, act)
		i := row*n + col
		if len(res) > 0 {
			v += co.Load(res[i])
		}
		c[i] = co.Store(v)
	}
}

// Act applies SiLU or GELU (exact, erf) to v; other acts leave it.
func Act(v float32, act int) float32 {
	if act == SiLU {
		return silu(v)
	}
	if act == GELU {
		return 0.5 * v * (1 + gpu.Erf(v*sqrtHalf))
	}
	return v
}

// silu is v·sigmoid(v), as ops' SiLUMul computes it.
func silu(v float32) float32 { return v / (1 + gpu.Exp(-v)) }

const sqrtHalf = 0.70710678118654752440 // 1/√2
