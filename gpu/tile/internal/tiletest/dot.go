package tiletest

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

// DotRows is c = a·wᵀ for a and w of 64 × 32 (one Dot, BK = 32), with
// an A operand of 64 rows: the right size for a block of 2 warps (Dot's
// accumulator tile is 32·W rows), too small for a block of 4, where
// Dot's one check on the operand's length (the conversion of the warp's
// rows to an array) must fail as a device error rather than let the
// ldmatrix addresses that the range analysis proved in bounds of a
// 4-warp operand read past it.
//
//kern:kernel block=128
func DotRows(t gpu.Thread, c []float32, a, w []gpu.Half) {
	av, wv := tile.Input[tile.F16](a).Matrix(64, tile.BK), tile.Input[tile.F16](w).Matrix(64, tile.BK)
	sa := gpu.Shared[gpu.Half](t, 64*tile.BK)
	sb := gpu.Shared[gpu.Half](t, 64*tile.BK)
	acc := tile.Dot(t, tile.Acc{}, tile.Stage(t, sa, av, 0, 0), tile.Stage(t, sb, wv, 0, 0))
	tile.StoreMat(t, tile.Tiles[tile.F32, tile.AccRegs, tile.AccRow](t, c, 64, 64), acc.Mat(t))
}

// DotKWarps is c = a·wᵀ for a [m,k] and w [n,k] with DotK, one block per
// 32·W × 64 tile of c. block=160 (5 warps), so that B's second copy slot
// (chunk i+160 < 256) is taken by some threads only; launched with 4 warps
// both slots are whole, with 3 DotK takes its loop of element copies.
//
//kern:kernel block=160
func DotKWarps(t gpu.Thread, c []float32, a, w []gpu.Half, m, n, k int) {
	ti, tj := tile.TileOf(t)
	av, wv := tile.Input[tile.F16](a).Matrix(m, k), tile.Input[tile.F16](w).Matrix(n, k)
	sa := gpu.Shared[gpu.Half](t, tile.Stages*160*tile.BK)
	sb := gpu.Shared[gpu.Half](t, tile.Stages*64*tile.BK)
	acc := tile.DotK(t, tile.Acc{}, sa, sb, av, wv, ti, tj)
	tile.StoreMat(t, tile.Tiles[tile.F32, tile.AccRegs, tile.AccRow](t, c, m, n), acc.Mat(t))
}
