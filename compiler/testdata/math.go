// The math functions of package gpu on float32, and math and math/bits.
package math

import (
	"math"
	"math/bits"

	"github.com/gokern/kern/gpu"
)

// Float32 calls the gpu math functions on float32 that lower to
// instruction sequences (Tanh and Erf are in devmath.go).
//
//kern:kernel
func Float32(t gpu.Thread, x, y []float32, out []float32) {
	i := t.GlobalX()
	if i >= len(x) || i >= len(y) || i >= len(out) {
		return
	}
	a, b := x[i], y[i]
	r := gpu.Exp(a) + gpu.Exp2(a) + gpu.Log(a) + gpu.Log2(a)
	r += gpu.Sqrt(a) + gpu.Rsqrt(a) + gpu.Sin(a) + gpu.Cos(a)
	r += gpu.Abs(a) + gpu.Floor(a) + gpu.Ceil(a)
	r += gpu.Min(a, b) + gpu.Max(a, b) + gpu.FMA(a, b, r)
	out[i] = r + math.Float32frombits(gpu.Float32Bits(a)^1)
}

// Float64 calls the gpu math functions on float64.
//
//kern:kernel
func Float64(t gpu.Thread, x, y []float64, out []float64) {
	i := t.GlobalX()
	if i >= len(x) || i >= len(y) || i >= len(out) {
		return
	}
	a, b := x[i], y[i]
	r := gpu.Sqrt(a) + gpu.Rsqrt(a) + gpu.Abs(a) + gpu.Floor(a) + gpu.Ceil(a)
	r += gpu.Min(a, b) + gpu.Max(a, b) + gpu.FMA(a, b, r)
	out[i] = r
}

// StdMath calls package math on float64.
//
//kern:kernel
func StdMath(t gpu.Thread, x, y, out []float64) {
	i := t.GlobalX()
	if i >= len(x) || i >= len(y) || i >= len(out) {
		return
	}
	a, b := x[i], y[i]
	r := math.Sqrt(a) + math.Abs(a) + math.Floor(a) + math.Ceil(a) + math.Trunc(a) + math.FMA(a, b, 1)
	r += math.Copysign(a, b) + math.Max(a, b) + math.Min(a, b)
	if math.IsNaN(r) {
		r = math.Float64frombits(math.Float64bits(a) | 1)
	}
	out[i] = r
}

// Bits calls math/bits on 32- and 64-bit words.
//
//kern:kernel
func Bits(t gpu.Thread, u32 []uint32, u64 []uint64, out []int) {
	i := t.GlobalX()
	if i >= len(u32) || i >= len(u64) || i >= len(out) {
		return
	}
	a, b := u32[i], u64[i]
	n := bits.OnesCount32(a) + bits.LeadingZeros32(a) + bits.TrailingZeros32(a) + bits.Len32(a)
	n += bits.OnesCount64(b) + bits.LeadingZeros64(b) + bits.TrailingZeros64(b) + bits.Len64(b)
	u32[i] = bits.Reverse32(a) ^ bits.RotateLeft32(a, 3)
	u64[i] = bits.Reverse64(b) ^ bits.RotateLeft64(b, -5)
	out[i] = n
}
