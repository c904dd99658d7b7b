package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// FusedSiluGate computes out[i] = silu(x[i]) * gate[i], the gated
// activation of a SwiGLU feed-forward layer, one element per thread.
//
//kern:kernel block=256
func FusedSiluGate(t gpu.Thread, x, gate, out []float32) {
	i := t.GlobalX()
	if i < len(out) {
		xi := x[i]
		out[i] = xi / (1 + gpu.Exp(-xi)) * gate[i]
	}
}
