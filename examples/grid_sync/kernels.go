package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// The 1-D heat equation by explicit Euler steps, u ← u + α·(u[i−1] − 2u[i]
// + u[i+1]), the two end cells held fixed. Every step reads the whole of
// the step before, so the grid must finish a step before any block starts
// the next: one launch per step, or one launch with a grid-wide barrier
// between steps.

// HeatStep is one step, src to dst: one thread per cell, a grid-stride
// loop so that any length fits any grid.
//
//kern:kernel block=256
func HeatStep(t gpu.Thread, src, dst []float32, alpha float32) {
	n := len(src)
	for i := t.GlobalX(); i < n; i += t.GridDim().X * t.BlockDim().X {
		dst[i] = heat(src, i, n, alpha)
	}
}

// HeatSteps runs steps steps in one cooperative launch, u and v in turn as
// source and destination (the result is in u after an even number of
// steps, in v after an odd one), the whole grid meeting at gpu.GridSync
// after each. Its grid is what the device holds at once
// (HeatStepsKernel.Kernel().MaxCooperativeBlocks).
//
//kern:kernel block=256
func HeatSteps(t gpu.Thread, u, v []float32, alpha float32, steps int) {
	n := len(u)
	stride := t.GridDim().X * t.BlockDim().X
	for s := 0; s < steps; s++ {
		src, dst := u, v
		if s%2 == 1 {
			src, dst = v, u
		}
		for i := t.GlobalX(); i < n; i += stride {
			dst[i] = heat(src, i, n, alpha)
		}
		gpu.GridSync(t) // step s is complete everywhere before s+1 reads it
	}
}

// heat is cell i's next value: the same float32 operations in the same
// order in both kernels, so both give the same bits.
func heat(x []float32, i, n int, alpha float32) float32 {
	if i == 0 || i == n-1 {
		return x[i]
	}
	return x[i] + alpha*(x[i-1]-2*x[i]+x[i+1])
}
