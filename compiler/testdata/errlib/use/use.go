// Package use calls package lib's functions from kernels.
package use

import (
	"github.com/gokern/kern/compiler/testdata/errlib/lib"
	"github.com/gokern/kern/gpu"
)

//kern:kernel
func Alloc(t gpu.Thread, x []float32) {
	x[1] = lib.Scratch(t, x)
}

//kern:kernel
func Diverge(t gpu.Thread, x []float32) {
	lib.SyncSome(t, x)
}

//kern:kernel
func Clean(t gpu.Thread, x []float32) {
	x[0] = lib.Fine(x[1], x[2])
}
