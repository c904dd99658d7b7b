// Tiles map onto ThreadIdx().X only: a kernel with a 2-D or 3-D block=
// may not use a thread-mapped tile operation, in its body or a helper.
package tileblock

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

//kern:kernel block=16x16
func TwoD(t gpu.Thread, y, x []float32, cols int) {
	r := tile.Load[[1]float32](t, tile.Input[tile.F32](x).Row(tile.RowOf(t), cols), 0) // ERROR TileBlockShape "tile.Load .at tileblock.go:12:7. maps tiles onto threads by ThreadIdx...X only, but kernel TwoD has block=16x16: give it a 1-D block .block=256."
	tile.Store(t, tile.Rows[tile.F32](t, y, cols), r)
}

// The tile code is in a helper: the error is at the kernel's call of it.
//
//kern:kernel block=8x8x4
func ThreeD(t gpu.Thread, y, x []float32, cols int) {
	rowSum(t, y, x, cols) // ERROR TileBlockShape "tile.Load .at tileblock.go:33:7. maps .* but kernel ThreeD has block=8x8x4"
}

// RowOf and Rows name blocks, not threads: a 2-D block may use them.
//
//kern:kernel block=16x16
func BlockOnly(t gpu.Thread, y []float32, cols int) {
	if p := tile.Rows[tile.F32](t, y, cols); t.ThreadIdx().X == 0 && t.ThreadIdx().Y == 0 && len(p) > 0 {
		p[0] = float32(tile.RowOf(t))
	}
}

func rowSum(t gpu.Thread, y, x []float32, cols int) {
	r := tile.Load[[2]float32](t, tile.Input[tile.F32](x).Row(tile.RowOf(t), cols), 0)
	tile.Store(t, tile.Rows[tile.F32](t, y, cols), r.MulS(r.ReduceSum(t)))
}
