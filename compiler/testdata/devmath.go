// Math routines inlined from package devmath: float32 Tanh and Erf, the
// float64 transcendental functions, and math's on float64.
//
// golden: none — the PTX follows devmath's source, which has its own
// accuracy tests; this file is compiled, assembled and checked for
// structure only.
package devmath

import (
	"math"

	"github.com/gokern/kern/gpu"
)

//kern:kernel
func Float32(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	if i >= len(x) || i >= len(out) {
		return
	}
	out[i] = gpu.Tanh(x[i]) + gpu.Erf(x[i])
}

//kern:kernel
func Float64(t gpu.Thread, x, out []float64) {
	i := t.GlobalX()
	if i >= len(x) || i >= len(out) {
		return
	}
	a := x[i]
	out[i] = gpu.Exp(a) + gpu.Exp2(a) + gpu.Log(a) + gpu.Log2(a) + gpu.Sin(a) + gpu.Cos(a) + gpu.Tanh(a) + gpu.Erf(a)
}

//kern:kernel
func StdMath(t gpu.Thread, x, out []float64) {
	i := t.GlobalX()
	if i >= len(x) || i >= len(out) {
		return
	}
	a := x[i]
	out[i] = math.Exp(a) + math.Log(a) + math.Exp2(a) + math.Log2(a) + math.Sin(a) + math.Cos(a) + math.Tanh(a) + math.Erf(a)
}
