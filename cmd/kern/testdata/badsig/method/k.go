// Package method marks a method as a kernel.
package method

import "github.com/gokern/kern/gpu"

type S struct{}

//kern:kernel
func (S) Scale(t gpu.Thread, x []float32) {
	x[t.GlobalX()] *= 2
}
