package testkernels

import "github.com/gokern/kern/gpu"

// AxpyPDL is Axpy launched with programmatic dependent launch on compute
// capability 9.0+: it waits for the kernels before it at its entry.
//
//kern:kernel block=128 pdl
func AxpyPDL(t gpu.Thread, a float32, x, y []float32) {
	i := t.GlobalX()
	if i < len(y) {
		y[i] = a*x[i] + y[i]
	}
}
