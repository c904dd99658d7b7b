package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// DequantInt8 expands int8 weights with one float32 scale per output
// channel (per row) to float32:
//
//	out[r][c] = float32(q[r][c]) · scale[r]
//
// q and out are rows×cols, row-major; scale has rows entries. A 2-D grid,
// x over columns (so a warp reads 32 consecutive bytes and writes 32
// consecutive floats) and y over rows. The product of an 8-bit integer and
// a float32 is rounded once, so the result is exact to float32.
//
//kern:kernel block=32x8
func DequantInt8(t gpu.Thread, q []int8, scale, out []float32, cols int) {
	c, r := t.GlobalX(), t.GlobalY()
	if c < cols && r < len(scale) {
		out[r*cols+c] = float32(q[r*cols+c]) * scale[r]
	}
}
