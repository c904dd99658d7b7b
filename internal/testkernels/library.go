package testkernels

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/testkernels/devlib"
)

// CenterAxpy computes y[i] += a·(x[i] − mean of the block's x) with the
// helpers of a kernel library (devlib), and reads x at a wrapped offset
// through its generic Wrap: out[i] = x[Wrap(i+shift, len(x))].
//
//kern:kernel block=128
func CenterAxpy(t gpu.Thread, a float32, x, y, out []float32, shift int) {
	i := t.GlobalX()
	v := float32(0)
	if i < len(x) {
		v = x[i]
	}
	m := devlib.BlockMean(t, v)
	if i < len(y) && i < len(x) {
		y[i] = devlib.Saxpy(a, v-m, y[i])
		out[i] = x[devlib.Wrap(i+shift, len(x))]
	}
}
