// Package tiletest holds tile kernels that exercise every operation of
// package gpu/tile, for its tests on the emulator and in native mode.
package tiletest

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

//go:generate go run github.com/gokern/kern/cmd/kern gen

// K is the registers per thread of the tiles below: with a block of B
// threads a tile holds K·B elements.
const K = 2

// Ops combines rows of a and b (rows of cols ≤ K·B) with every
// element-wise op and writes the result to out; stats gets, per row, the
// sum and the maximum of the result and the sum of squares of a. Masked
// elements (past cols) are loaded as 0 from a and 1 from b, and the ops
// apply to them too, as the package documents.
//
//kern:kernel block=64
func Ops(t gpu.Thread, out, stats, a, b []float32, cols int, c float32) {
	row := tile.RowOf(t)
	x := tile.Load[[K]float32](t, tile.Input[tile.F32](a).Row(row, cols), 0)
	y := tile.Load[[K]float32](t, tile.Input[tile.F32](b).Row(row, cols), 1)
	z := x.Add(y).Mul(x.Sub(y)).Div(y).Maximum(tile.Full[[K]float32](c))
	z = z.AddS(c).SubS(0.5).MulS(2).DivS(4).Exp()
	s, m, q := z.ReduceSum(t), z.ReduceMax(t), x.SumSquares(t)
	tile.Store(t, tile.Rows[tile.F32](t, out, cols), z)
	// stats is neither partitioned nor an input: ordinary rules apply.
	if t.ThreadIdx().X == 0 && 3*row+2 < len(stats) {
		stats[3*row], stats[3*row+1], stats[3*row+2] = s, m, q
	}
}

// RoundTrip loads rows of half and bfloat16 storage and stores them back
// through the codecs, scaled by 2.
//
//kern:kernel block=64
func RoundTrip(t gpu.Thread, h []gpu.Half, hb []gpu.BFloat16, x []gpu.Half, xb []gpu.BFloat16, cols int) {
	row := tile.RowOf(t)
	v := tile.Load[[K]float32](t, tile.Input[tile.F16](x).Row(row, cols), 0)
	w := tile.Load[[K]float32](t, tile.Input[tile.BF16](xb).Row(row, cols), 0)
	tile.Store(t, tile.Rows[tile.F16](t, h, cols), v.MulS(2))
	tile.Store(t, tile.Rows[tile.BF16](t, hb, cols), w.MulS(2))
}

// Int8 quantizes rows of x to q (x·scale, rounded to nearest even and
// saturated) and dequantizes rows of p to back (p/2).
//
//kern:kernel block=64
func Int8(t gpu.Thread, q []int8, back []float32, x []float32, p []int8, cols int, scale float32) {
	row := tile.RowOf(t)
	v := tile.Load[[K]float32](t, tile.Input[tile.F32](x).Row(row, cols), 0)
	tile.Store(t, tile.Rows[tile.I8](t, q, cols), v.MulS(scale))
	w := tile.Load[[K]float32](t, tile.Input[tile.I8](p).Row(row, cols), 0)
	tile.Store(t, tile.Rows[tile.F32](t, back, cols), w.DivS(2))
}
