// Kernel signatures: gpu.Thread first, no results, scalar and slice
// parameters only.
package signature

import "github.com/gokern/kern/gpu"

//kern:kernel
func NoThread(x []float32) {} // ERROR BadKernelSignature "first parameter must be gpu.Thread"

//kern:kernel
func ThreadSecond(x []float32, t gpu.Thread) {} // ERROR BadKernelSignature "first parameter must be gpu.Thread"

//kern:kernel
func Results(t gpu.Thread, x []float32) float32 { return 0 } // ERROR BadKernelSignature "must not return results"

//kern:kernel
func Generic[T float32 | float64](t gpu.Thread, x []T) {} // ERROR BadKernelSignature "not a method or generic func"

type point struct{ x, y float32 }

//kern:kernel
func BadParams(t gpu.Thread,
	p point, // ERROR BadKernelSignature "kernel parameter p has type"
	s string, // ERROR BadKernelSignature "kernel parameter s has type"
	pp *float32, // ERROR BadKernelSignature "kernel parameter pp has type"
	ss [][]float32, // ERROR BadKernelSignature "kernel parameter ss has type"
	m map[int]int, // ERROR BadKernelSignature "kernel parameter m has type"
	a [4]float32, // ERROR BadKernelSignature "kernel parameter a has type"
	x []float32) {
}

//kern:kernel
func NoBody(t gpu.Thread) // ERROR BadKernelSignature "kernel NoBody has no body"

type scaler struct{ a float32 }

//kern:kernel
func (s scaler) Method(t gpu.Thread, x []float32) {} // ERROR BadKernelSignature "not a method"
