package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// GeluErf is the exact GELU, x·Φ(x) = x/2·(1 + erf(x/√2)), one element per
// thread.
//
//kern:kernel block=256
func GeluErf(t gpu.Thread, x, out []float32) {
	if i := t.GlobalX(); i < len(out) {
		xi := x[i]
		out[i] = 0.5 * xi * (1 + gpu.Erf(xi*invSqrt2))
	}
}

// GeluTanh is the tanh approximation of GELU used by GPT-2 and BERT,
// x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³))), one element per thread.
//
//kern:kernel block=256
func GeluTanh(t gpu.Thread, x, out []float32) {
	if i := t.GlobalX(); i < len(out) {
		xi := x[i]
		u := sqrt2OverPi * (xi + 0.044715*xi*xi*xi)
		out[i] = 0.5 * xi * (1 + gpu.Tanh(u))
	}
}

const (
	invSqrt2    = 0.70710678118654752440 // 1/√2
	sqrt2OverPi = 0.79788456080286535588 // √(2/π)
)
