//kern:library

// Package gemvdev is the device code the decode GEMVs share (v2 in
// ops/internal/gemvtc, v3 in gemv3, the fused norm's in gemvnorm): v2's
// weight layout and loads and the input types' packing into mma
// registers (their epilogue is ops/internal/epilogue, every matmul's).
// Each GEMV is a kernel package of its own, for generated-code size; as
// a kernel library (compiler/library.go) this code is inlined into each,
// from one source.
package gemvdev

import "github.com/gokern/kern/gpu"

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
