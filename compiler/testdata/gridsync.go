// gpu.GridSync: the grid barrier (lower_grid.go) with its hidden
// kern_grid parameter, under a 1-D block (thread 0 by tid.x alone) and a
// 2-D one (tid.x | tid.y).
package gridsync

import "github.com/gokern/kern/gpu"

//kern:kernel block=128 nobounds
func Publish(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	out[i] = x[i]
	gpu.GridSync(t)
	out[i] += out[(i+t.BlockDim().X)%len(out)]
}

//kern:kernel block=16x8 nobounds
func Publish2D(t gpu.Thread, out []float32) {
	gpu.GridSync(t)
	out[t.GlobalX()] = 1
}
