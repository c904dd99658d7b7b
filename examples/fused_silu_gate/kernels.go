package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// SiluGate computes out[i] = silu(x[i]) · gate[i] = x[i]·sigmoid(x[i])·gate[i],
// the gated activation of a SwiGLU feed-forward layer, for vectors of any
// length. It is a grid-stride loop: each thread handles elements i,
// i+stride, i+2·stride, ... where stride is the number of threads in the
// grid, so a fixed grid sized to the device covers any n and each warp's
// loads stay coalesced (32 consecutive floats per step).
//
//kern:kernel block=256 idx32
func SiluGate(t gpu.Thread, x, gate, out []float32) {
	stride := t.GridDim().X * t.BlockDim().X
	for i := t.GlobalX(); i < len(out); i += stride {
		xi := x[i]
		out[i] = xi / (1 + gpu.Exp(-xi)) * gate[i]
	}
}
