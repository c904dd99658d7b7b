package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// Poly computes out[i] = x[i]·(x[i]/2 + 1), one element per thread: a
// stand-in for any element-wise stage of a pipeline.
//
//kern:kernel block=256
func Poly(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	if i < len(out) {
		xi := x[i]
		out[i] = xi * (xi/2 + 1)
	}
}
