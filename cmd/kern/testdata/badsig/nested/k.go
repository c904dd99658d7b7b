// Package nested has a kernel taking [][]float32.
package nested

import "github.com/gokern/kern/gpu"

//kern:kernel
func Scale(t gpu.Thread, x [][]float32) {
	x[0][t.GlobalX()] *= 2
}
