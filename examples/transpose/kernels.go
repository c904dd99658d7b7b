package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// Matrix transpose: out (cols×rows) = inᵀ, in rows×cols, both row-major.
// Three versions:
//
//	v1 TransposeNaive     one element per thread, no shared memory: the
//	                      reads of a warp are 32 consecutive floats, its
//	                      writes 32 floats a whole column apart (32 sectors).
//	v2 TransposeTiled     a 32×32 tile staged in shared memory, so both the
//	                      global reads and the global writes are rows; but
//	                      reading a tile column hits one bank 32 times.
//	v3 TransposePadded    v2 with the tile's rows 33 floats apart: the
//	                      column's 32 elements fall in 32 different banks.
//
// Shared memory has 32 banks of 4-byte words; word w is in bank w mod 32.
// In a 32-wide tile, column j of rows 0..31 is words j, 32+j, 64+j, ...:
// all bank j. With a pitch of 33 they are words j, 33+j, 66+j, ...: banks
// j, j+1, j+2, ... The padding costs 32 floats (128 bytes) per tile.
//
// The tiled versions run 32×8 threads per 32×32 tile, each thread moving
// 4 elements: enough threads to hide latency, few enough that each does
// some work.

const tile = 32

// TransposeNaive is v1.
//
//kern:kernel block=32x8
func TransposeNaive(t gpu.Thread, in, out []float32, rows, cols int) {
	c, r := t.GlobalX(), t.GlobalY()
	if r < rows && c < cols {
		out[c*rows+r] = in[r*cols+c]
	}
}

// TransposeTiled is v2: a 32×32 shared tile.
//
//kern:kernel block=32x8
func TransposeTiled(t gpu.Thread, in, out []float32, rows, cols int) {
	s := gpu.Shared[float32](t, tile*tile)
	transposeTile(t, in, out, s, rows, cols, tile)
}

// TransposePadded is v3: a 32×33 shared tile.
//
//kern:kernel block=32x8 idx32
func TransposePadded(t gpu.Thread, in, out []float32, rows, cols int) {
	s := gpu.Shared[float32](t, tile*(tile+1))
	transposeTile(t, in, out, s, rows, cols, tile+1)
}

// transposeTile moves the block's tile (rows r0.., columns c0.. of in)
// through s, whose rows are pitch floats apart. Warps are rows of the
// thread block (fixed ThreadIdx.Y), lanes are ThreadIdx.X.
func transposeTile(t gpu.Thread, in, out, s []float32, rows, cols, pitch int) {
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	r0, c0 := t.BlockIdx().Y*tile, t.BlockIdx().X*tile
	// A warp reads 32 consecutive floats of one row of in and stores them
	// in one row of the tile: 32 consecutive words, no bank conflict.
	for k := 0; k < tile; k += 8 {
		if r, c := r0+ty+k, c0+tx; r < rows && c < cols {
			s[(ty+k)*pitch+tx] = in[r*cols+c]
		}
	}
	t.Sync()
	// A warp writes 32 consecutive floats of one row of out: one column of
	// the tile, s[tx*pitch + j]. With pitch 32 that is bank j for every
	// lane (a 32-way conflict); with pitch 33, banks j..j+31.
	for k := 0; k < tile; k += 8 {
		if r, c := c0+ty+k, r0+tx; r < cols && c < rows {
			out[r*rows+c] = s[tx*pitch+ty+k]
		}
	}
}
