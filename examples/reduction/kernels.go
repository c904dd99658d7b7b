package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// SumPartial adds x into one float32 per block, partial[BlockIdx]. Run it
// on many blocks to get the block sums, then once more on one block over
// those sums to get the total. Three stages:
//
//  1. thread: a grid-stride loop adds elements i, i+stride, ... (stride =
//     threads in the grid), so any length fits a fixed grid and each
//     warp's loads are 32 consecutive floats;
//  2. warp: five shuffle-down steps (offsets 16, 8, 4, 2, 1) fold the
//     upper half of the warp onto the lower; lane 0 ends with the warp's
//     sum, the other lanes with partial sums nobody reads;
//  3. block: lane 0 of each warp writes its sum to shared memory, and
//     after the barrier warp 0 adds those (at most 32) with gpu.WarpSum.
//
// The block size must be a multiple of 32.
//
//kern:kernel block=256
func SumPartial(t gpu.Thread, x, partial []float32) {
	v := float32(0)
	stride := t.GridDim().X * t.BlockDim().X
	for i := t.GlobalX(); i < len(x); i += stride {
		v += x[i]
	}

	//kern:unroll
	for k := range 5 {
		v += gpu.ShflDown(t, v, 16>>k) // offsets 16, 8, 4, 2, 1
	}

	warpSums := gpu.Shared[float32](t, 32)
	if t.Lane() == 0 {
		warpSums[t.Warp()] = v
	}
	t.Sync()
	// Warp() is the same for the whole warp, so the warp collective inside
	// this branch is reached by all 32 lanes together.
	if t.Warp() == 0 {
		w := float32(0)
		if t.Lane() < t.BlockDim().X/32 {
			w = warpSums[t.Lane()]
		}
		w = gpu.WarpSum(t, w)
		if t.Lane() == 0 {
			partial[t.BlockIdx().X] = w
		}
	}
}
