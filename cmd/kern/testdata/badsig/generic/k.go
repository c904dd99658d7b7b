// Package generic has a generic kernel, which kern rejects at its own line
// (not as a type error in the generated file).
package generic

import "github.com/gokern/kern/gpu"

//kern:kernel
func Scale[T float32 | float64](t gpu.Thread, x []T) {
	x[t.GlobalX()] *= 2
}

var _ = ScaleKernel // host code using the launcher kern gen would write
