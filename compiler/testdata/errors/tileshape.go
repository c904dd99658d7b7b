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
