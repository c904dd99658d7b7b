package tiletest

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

// The 2-D tile kernels' shape: [MI][MJ]float32 per thread, so with a block
// of 64 threads (2 warps) a tile is 2·MI × 32·MJ = 4 × 64.
const (
	MI = 2
	MJ = 2
)

type (
	regs    = [MI][MJ]float32
	regsRow = [MJ]float32
)

// Mat2 exercises the 2-D tile: y = a·scale[r] + bias[c] from a tile load
// and a column and a row broadcast; out is y's softmax along each row of
// the tile (tile-local: over the tile's 64 columns), and cs is, per
// element, the sum plus the maximum of its column of the tile of a
// loaded with fill 0 (so rows past the end count as 0). Masked elements
// of y are -Inf: a is loaded with fill -Inf and scale is positive.
//
//kern:kernel block=64
func Mat2(t gpu.Thread, out, cs, a, scale, bias []float32, rows, cols int) {
	ti, tj := tile.TileOf(t)
	in := tile.Input[tile.F32](a).Matrix(rows, cols)
	x := tile.LoadMat[regs, regsRow](t, in, ti, tj, tile.NegInf())
	s := tile.BroadcastCol[regs, regsRow](t, tile.Input[tile.F32](scale), ti, 1)
	b := tile.BroadcastRow[regs, regsRow](t, tile.Input[tile.F32](bias), tj, 0)
	y := x.Mul(s).Add(b)
	e := y.Sub(y.RowMaxes(t)).Exp()
	tile.StoreMat(t, tile.Tiles[tile.F32, regs, regsRow](t, out, rows, cols), e.Div(e.RowSums(t)))
	z := tile.LoadMat[regs, regsRow](t, in, ti, tj, 0)
	tile.StoreMat(t, tile.Tiles[tile.F32, regs, regsRow](t, cs, rows, cols), z.ColSums(t).Add(z.ColMaxes(t)))
}

// MatOps applies the remaining element-wise ops to 2-D tiles of a and
// b, stored as bfloat16 (ragged: fill 1 for both).
//
//kern:kernel block=64
func MatOps(t gpu.Thread, out []gpu.BFloat16, a, b []gpu.Half, rows, cols int, c float32) {
	ti, tj := tile.TileOf(t)
	x := tile.LoadMat[regs, regsRow](t, tile.Input[tile.F16](a).Matrix(rows, cols), ti, tj, 1)
	y := tile.LoadMat[regs, regsRow](t, tile.Input[tile.F16](b).Matrix(rows, cols), ti, tj, 1)
	z := x.Sub(y).Maximum(tile.FullMat[regs, regsRow](c)).AddS(c).SubS(0.25).MulS(3).DivS(2)
	tile.StoreMat(t, tile.Tiles[tile.BF16, regs, regsRow](t, out, rows, cols), z)
}
