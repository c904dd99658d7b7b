// Tile kernels (package gpu/tile): the library's functions are inlined
// like the kernel's helpers and every loop over a tile's registers is
// unrolled, so a row tile lives in registers.
package tile

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

// Softmax of each row of x (rows of cols ≤ 4·256 elements).
//
//kern:kernel block=256
func Softmax(t gpu.Thread, y, x []float32, cols int) {
	r := tile.Load[[4]float32](t, tile.Input[tile.F32](x).Row(tile.RowOf(t), cols), tile.NegInf())
	e := r.SubS(r.ReduceMax(t)).Exp()
	tile.Store(t, tile.Rows[tile.F32](t, y, cols), e.DivS(e.ReduceSum(t)))
}

// RMSNorm of each half-precision row, with a weight (rows of cols ≤ 2·128).
//
//kern:kernel block=128
func RMSNormHalf(t gpu.Thread, y, x, w []gpu.Half, cols int, eps float32) {
	out := tile.Rows[tile.F16](t, y, cols)
	r := tile.Load[[2]float32](t, tile.Input[tile.F16](x).Row(tile.RowOf(t), cols), 0)
	g := tile.Load[[2]float32](t, tile.Input[tile.F16](w), 0)
	s := gpu.Rsqrt(r.SumSquares(t)/float32(cols) + eps)
	tile.Store(t, out, r.MulS(s).Mul(g))
}
