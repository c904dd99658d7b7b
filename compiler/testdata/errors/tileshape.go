// A row tile's registers per thread are a power of two (tile.Regs): any
// other count is a type error at the instantiation, reported with its
// file:line:col.
package tileshape

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

//kern:kernel block=256
func NotPowerOfTwo(t gpu.Thread, y, x []float32, cols int) {
	r := tile.Load[[3]float32](t, tile.Input[tile.F32](x), 0) // ERROR TypeError ".3.float32 does not satisfy tile.Regs"
	tile.Store(t, tile.Rows[tile.F32](t, y, cols), r)         // ERROR TypeError "does not satisfy tile.Regs"
}

// A 2-D tile's register rows are a power of two too (tile.Regs2).
//
//kern:kernel block=64
func MatNotPowerOfTwo(t gpu.Thread, y, x []float32, rows, cols int) {
	m := tile.LoadMat[[3][2]float32, [2]float32](t, tile.Input[tile.F32](x).Matrix(rows, cols), 0, 0, 0) // ERROR TypeError ".3..2.float32 does not satisfy tile.Regs2"
	tile.StoreMat(t, tile.Tiles[tile.F32, [2][2]float32, [2]float32](t, y, rows, cols), m)               // ERROR TypeError "type tile.Mat.* of m does not match"
}
