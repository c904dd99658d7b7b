//kern:library

// Package gemvdev is the device code the decode GEMVs share (v2 in
// ops/internal/gemvtc, v3 in gemv3, the fused norm's in gemvnorm): the
// input types' packing into mma registers, the output types' float32
// conversions, and ops.Matmul's epilogue. Each GEMV is a kernel package
// of its own, for generated-code size; as a kernel library
// (compiler/library.go) this code is inlined into each, from one source.
package gemvdev

import (
	"math"

	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/mm"
)

// v2's layout (ops/internal/gemvtc; gemvnorm follows it): a block's
// Warps warps share a 16-row tile of W, each warp taking Unroll chunks of
// 32 columns an iteration, chunk c+u·Warps for u < Unroll.
const (
	Warps  = 8
	Unroll = 4 // chunks of 32 columns in flight per warp
)

// LoadW loads the W chunks of the iteration at chunk c in v2's layout:
// rows g and g+8 of the block's 16 (offsets wa and wb at chunk 0),
// columns 8q..8q+7 of each chunk.
func LoadW[A gpu.Elem, CA In[A]](ca CA, w []A, wa, wb, c int32) (fa, fb [Unroll][4]uint32) {
	//kern:unroll
	for u := range Unroll {
		kc := (c + int32(u*Warps)) << 5
		fa[u] = ca.Pack(gpu.Load8(w, int(wa+kc)))
		fb[u] = ca.Pack(gpu.Load8(w, int(wb+kc)))
	}
	return fa, fb
}

// In is the input type: its packing of 8 elements loaded at once
// (gpu.Load8, one 128-bit load) into four mma registers, the lower
// element in the low half, its m16n8k16 mma, and the rounding of a
// float32 to it.
type In[A any] interface {
	Pack(v [8]A) [4]uint32
	MMA(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32
	Round(v float32) A
}

// TCHalf is In for gpu.Half.
type TCHalf struct{}

func (TCHalf) Pack(v [8]gpu.Half) [4]uint32 {
	return [4]uint32{gpu.PackHalf2(v[0], v[1]), gpu.PackHalf2(v[2], v[3]), gpu.PackHalf2(v[4], v[5]), gpu.PackHalf2(v[6], v[7])}
}

func (TCHalf) MMA(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMAF16(t, a, b, c)
}

func (TCHalf) Round(v float32) gpu.Half { return gpu.ToHalf(v) }

// TCBFloat16 is In for gpu.BFloat16.
type TCBFloat16 struct{}

func (TCBFloat16) Pack(v [8]gpu.BFloat16) [4]uint32 {
	return [4]uint32{gpu.PackBFloat162(v[0], v[1]), gpu.PackBFloat162(v[2], v[3]), gpu.PackBFloat162(v[4], v[5]), gpu.PackBFloat162(v[6], v[7])}
}

func (TCBFloat16) MMA(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMABF16(t, a, b, c)
}

func (TCBFloat16) Round(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }

// Out is the output type, as ops' codecs (dtype.go): float32 arithmetic,
// one rounding.
type Out[T any] interface {
	Load(T) float32
	Store(float32) T
}

// OutF32, OutHalf and OutBFloat16 are Out for float32, gpu.Half and
// gpu.BFloat16.
type (
	OutF32      struct{}
	OutHalf     struct{}
	OutBFloat16 struct{}
)

func (OutF32) Load(x float32) float32           { return x }
func (OutF32) Store(v float32) float32          { return v }
func (OutHalf) Load(x gpu.Half) float32         { return x.Float32() }
func (OutHalf) Store(v float32) gpu.Half        { return gpu.ToHalf(v) }
func (OutBFloat16) Load(x gpu.BFloat16) float32 { return x.Float32() }
func (OutBFloat16) Store(v float32) gpu.BFloat16 {
	return gpu.ToBFloat16(v)
}

// Store finishes out[row][col], out[row][col+1] as Matmul's epilogue
// does (col even; with SwiGLU the pair is gate, up of output col/2):
// bias, the activation (mm.Epi*), the residual, one rounding to O.
func Store[O any, CO Out[O]](co CO, out, bias, res []O, row, col, m, n, act int, v0, v1 float32) {
	if row < m {
		has1 := col+1 < n
		if len(bias) > 0 {
			v0 += co.Load(bias[col])
			if has1 {
				v1 += co.Load(bias[col+1])
			}
		}
		if act == mm.EpiSwiGLU {
			i := row*(n>>1) + col>>1
			v := v0 / (1 + gpu.Exp(-v0)) * v1
			if len(res) > 0 {
				v += co.Load(res[i])
			}
			out[i] = co.Store(v)
		} else {
			i := row*n + col
			v0 = Act(v0, act)
			if len(res) > 0 {
				v0 += co.Load(res[i])
			}
			out[i] = co.Store(v0)
			if has1 {
				v1 = Act(v1, act)
				if len(res) > 0 {
					v1 += co.Load(res[i+1])
				}
				out[i+1] = co.Store(v1)
			}
		}
	}
}

// Act applies mm.EpiSiLU or mm.EpiGELU (any other act: none).
func Act(v float32, act int) float32 {
	if act == mm.EpiSiLU {
		return v / (1 + gpu.Exp(-v))
	}
	if act == mm.EpiGELU {
		return 0.5 * v * (1 + gpu.Erf(v*math.Sqrt2/2))
	}
	return v
}
