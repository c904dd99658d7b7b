// Package i8 holds the W8A8 GEMM behind ops.MatmulInt8: int8 activations
// with a scale per row (token) times int8 weights with a scale per output
// channel, on the tensor cores' integer path (mma.sync m16n8k32 s8, int32
// accumulation, exact), scaled once in float32 at the store:
//
//	c[i,j] = aScale[i] · wScale[j] · Σ_k a[i,k]·w[j,k]
//
// Shapes (row-major): a [M, K] int8, aScales [M] float32, w [N, K] int8
// (a linear layer's weight), wScales [N] float32, c [M, N] O ∈ {float32,
// float16, bfloat16}. Any M, N, K.
//
// Version v1, the simple one: a warp per 16×8 tile of C (four per block),
// fragments loaded from global memory per the layout of gpu/mma.go: lane
// (g, q) packs A[g][4q..4q+3], A[g+8][…], A[g][4q+16..], A[g+8][…] and
// W[g][4q..4q+3], W[g][4q+16..] as four bytes per register, one 32-bit
// load where the four lie inside the row, bytewise at the K edge and zero
// outside. The int32 sums are exact while |Σ| < 2³¹ (K < 2³¹/127²,
// about 133 000). Version v2 (tc.go) is the pipelined one: ops/internal/
// mm's tiles with a 64-byte k tile, for K a multiple of 16. A package of
// its own to keep each generated file under a megabyte.
package i8

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// Warps is the warps per block of the kernels (one 16×8 tile each).
const Warps = 4

//kern:kernel block=128
func i8F32(t gpu.Thread, c []float32, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	i8mm(f32c{}, t, c, a, as, w, ws, m, n, k)
}

//kern:kernel block=128
func i8F16(t gpu.Thread, c []gpu.Half, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	i8mm(f16c{}, t, c, a, as, w, ws, m, n, k)
}

//kern:kernel block=128
func i8BF16(t gpu.Thread, c []gpu.BFloat16, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	i8mm(bf16c{}, t, c, a, as, w, ws, m, n, k)
}

// Kernels are indexed by output type: float32, float16, bfloat16.
var Kernels = [3]*kern.Kernel{i8F32Kernel.Kernel(), i8F16Kernel.Kernel(), i8BF16Kernel.Kernel()}

func i8mm[O any, CO codec[O]](co CO, t gpu.Thread, c []O, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	tilesN := (n + 7) >> 3
	tile := t.BlockIdx().X*Warps + t.Warp()
	tm, tn := tile/tilesN, tile%tilesN
	if tm*16 < m { // warp-uniform
		l := t.Lane()
		g, q := l>>2, l&3
		row, col := tm*16+g, tn*8+g
		var acc [4]int32
		for k0 := 0; k0 < k; k0 += 32 {
			kc := k0 + 4*q
			fa := [4]uint32{
				pack4(a, row, kc, m, k),
				pack4(a, row+8, kc, m, k),
				pack4(a, row, kc+16, m, k),
				pack4(a, row+8, kc+16, m, k),
			}
			fb := [2]uint32{pack4(w, col, kc, n, k), pack4(w, col, kc+16, n, k)}
			acc = gpu.MMAS8(t, fa, fb, acc)
		}
		row, col = tm*16+g, tn*8+2*q
		i8Store(co, c, as, ws, row, col, m, n, acc[0], acc[1])
		i8Store(co, c, as, ws, row+8, col, m, n, acc[2], acc[3])
	}
}

// pack4 packs x[r][kc..kc+3] (bytes, the lowest column in bits 0..7),
// zero outside the rows × k matrix.
func pack4(x []int8, r, kc, rows, k int) uint32 {
	v := uint32(0)
	if r < rows && kc < k {
		i := r*k + kc
		if kc+4 <= k && i&3 == 0 { // one 32-bit load
			b := gpu.Load4(x, i)
			v = uint32(uint8(b[0])) | uint32(uint8(b[1]))<<8 | uint32(uint8(b[2]))<<16 | uint32(uint8(b[3]))<<24
		} else {
			//kern:unroll
			for e := range 4 {
				if kc+e < k {
					v |= uint32(uint8(x[i+e])) << (8 * e)
				}
			}
		}
	}
	return v
}

// i8Store writes C[row][col], C[row][col+1] from the int32 sums.
func i8Store[O any, CO codec[O]](co CO, c []O, as, ws []float32, row, col, m, n int, s0, s1 int32) {
	if row < m && col < n {
		ra := as[row]
		c[row*n+col] = co.store(ra * ws[col] * float32(s0))
		if col+1 < n {
			c[row*n+col+1] = co.store(ra * ws[col+1] * float32(s1))
		}
	}
}

// Output codecs, as ops' (dtype.go).
type codec[T any] interface{ store(float32) T }

type f32c struct{}

func (f32c) store(v float32) float32 { return v }

type f16c struct{}

func (f16c) store(v float32) gpu.Half { return gpu.ToHalf(v) }

type bf16c struct{}

func (bf16c) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }
