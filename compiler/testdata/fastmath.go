// //kern:kernel fastmath: float add, sub and mul lose their .rn (so ptxas
// may contract mul+add into fma) and Exp, Sin, Cos, Tanh become the bare
// approximate instructions. The same body without the option keeps Go's
// roundings and the range-reduced sequences.
package fastmath

import "github.com/gokern/kern/gpu"

//kern:kernel block=256 fastmath
func Fast(t gpu.Thread, x, y, out []float32) {
	if i := t.GlobalX(); i < len(out) && i < len(x) && i < len(y) {
		v := x[i]*y[i] + 1
		out[i] = v*gpu.Exp(x[i]) - gpu.Sin(v) + gpu.Cos(v)*gpu.Tanh(y[i])
	}
}

//kern:kernel block=256
func Exact(t gpu.Thread, x, y, out []float32) {
	if i := t.GlobalX(); i < len(out) && i < len(x) && i < len(y) {
		v := x[i]*y[i] + 1
		out[i] = v*gpu.Exp(x[i]) - gpu.Sin(v) + gpu.Cos(v)*gpu.Tanh(y[i])
	}
}
