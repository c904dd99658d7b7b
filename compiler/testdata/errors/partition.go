// Tile kernels write outputs only through the block's partition
// (tile.Rows) and never write inputs (tile.Input).
package partition

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

//kern:kernel block=256
func DirectStore(t gpu.Thread, y, x []float32, cols int) {
	r := tile.Load[[4]float32](t, tile.Input[tile.F32](x).Row(tile.RowOf(t), cols), 0)
	tile.Store(t, tile.Rows[tile.F32](t, y, cols), r)
	y[0] = 1 // ERROR WriteOutsidePartition "y is partitioned among blocks .tile.Rows at partition.go:13:39. but may be written outside"
}

//kern:kernel block=256
func Reslice(t gpu.Thread, y, x []float32, cols int) {
	r := tile.Load[[1]float32](t, tile.Input[tile.F32](x), 0)
	tile.Store(t, tile.Rows[tile.F32](t, y[cols:], cols), r) // ERROR WriteOutsidePartition "y is partitioned"
}

// The store is in a helper: the check follows y into it.
//
//kern:kernel block=256
func HelperStore(t gpu.Thread, y, x []float32, cols int) {
	r := tile.Load[[1]float32](t, tile.Input[tile.F32](x), 0)
	tile.Store(t, tile.Rows[tile.F32](t, y, cols), r)
	bump(y)
}

func bump(s []float32) {
	s[0]++ // ERROR WriteOutsidePartition "y is partitioned"
}

//kern:kernel block=256
func AtomicOnOutput(t gpu.Thread, y, x []float32, cols int) {
	r := tile.Load[[1]float32](t, tile.Input[tile.F32](x), 0)
	tile.Store(t, tile.Rows[tile.F32](t, y, cols), r)
	gpu.AtomicAdd(&y[1], 1) // ERROR WriteOutsidePartition "y is partitioned"
}

//kern:kernel block=256
func WriteInput(t gpu.Thread, y, x []float32, cols int) {
	r := tile.Load[[1]float32](t, tile.Input[tile.F32](x), 0)
	tile.Store(t, tile.Rows[tile.F32](t, y, cols), r)
	x[0] = 2 // ERROR WriteToInput "x is viewed as a read-only input .tile.Input at partition.go:45:53. but may be written here"
}

//kern:kernel block=256
func InputAsOutput(t gpu.Thread, x []float32, cols int) {
	r := tile.Load[[1]float32](t, tile.Input[tile.F32](x), 0)
	tile.Store(t, tile.Rows[tile.F32](t, x, cols), r) // ERROR WriteToInput "x is viewed as a read-only input .* and partitioned as an output here"
}

//kern:kernel block=256
func WriteInView(t gpu.Thread, y, x []float32, cols int) {
	v := tile.Input[tile.F32](x)
	v[0] = 3 // ERROR WriteToInput "a tile.In view is read-only"
	tile.Store(t, tile.Rows[tile.F32](t, y, cols), tile.Load[[1]float32](t, v, 0))
}

// Reading a partitioned or input slice directly, and len, are fine.
//
//kern:kernel block=256
func Reads(t gpu.Thread, y, x []float32, cols int) {
	r := tile.Load[[1]float32](t, tile.Input[tile.F32](x), x[0]+float32(len(y)))
	tile.Store(t, tile.Rows[tile.F32](t, y, cols), r.AddS(y[0]))
}

// 2-D tiles: a tile.Tiles partition is guarded like a tile.Rows one.
//
//kern:kernel block=64
func MatDirectStore(t gpu.Thread, y, x []float32, rows, cols int) {
	ti, tj := tile.TileOf(t)
	m := tile.LoadMat[[2][2]float32, [2]float32](t, tile.Input[tile.F32](x).Matrix(rows, cols), ti, tj, 0)
	tile.StoreMat(t, tile.Tiles[tile.F32, [2][2]float32, [2]float32](t, y, rows, cols), m)
	y[1] = 0 // ERROR WriteOutsidePartition "y is partitioned among blocks .tile.Tiles at partition.go:[0-9]+:[0-9]+. but may be written outside the block's partition here: write only through the partition that tile.Tiles returns"
}

//kern:kernel block=64
func MatInputAsOutput(t gpu.Thread, x []float32, rows, cols int) {
	m := tile.LoadMat[[1][1]float32, [1]float32](t, tile.Input[tile.F32](x).Matrix(rows, cols), 0, 0, 0)
	tile.StoreMat(t, tile.Tiles[tile.F32, [1][1]float32, [1]float32](t, x, rows, cols), m) // ERROR WriteToInput "x is viewed as a read-only input .* and partitioned as an output here"
}

// tile.Heads partitions an attention output and its log-sum-exps; a
// direct write of either could reach another block's rows.
//
//kern:kernel block=128
func HeadsDirectStore(t gpu.Thread, out []gpu.Half, lse []float32, cu []int32, heads int) {
	p := tile.Heads[tile.F16, [8][4]float32](t, out, lse, cu, heads)
	p.Store(t, tile.Frag[[8][4]float32]{})
	lse[0] = 1 // ERROR WriteOutsidePartition "lse is partitioned among blocks .tile.Heads at partition.go:[0-9]+:[0-9]+. but may be written outside"
}
