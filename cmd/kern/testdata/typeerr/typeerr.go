// Package typeerr has two type errors; kern check reports both, and the
// kern diagnostics of the other packages it checks.
package typeerr

import "github.com/gokern/kern/gpu"

//kern:kernel
func Scale(t gpu.Thread, x []float32) {
	x[t.GlobalX()] *= undefinedA
}

func host() int { return undefinedB }
