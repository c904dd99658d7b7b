package stale

import "github.com/gokern/kern/gpu"

//kern:kernel block=64
func Scale(t gpu.Thread, a float32, x []float32) {
	if i := t.GlobalX(); i < len(x) {
		x[i] *= a
	}
}
