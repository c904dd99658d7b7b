// //kern:nounroll: the loop's header starts with .pragma "nounroll", which
// ptxas honours (and the emulator skips); the loop is otherwise the same.
package nounroll

import "github.com/gokern/kern/gpu"

//kern:kernel block=32 nobounds
func Dot(t gpu.Thread, x, y, out []float32, n int) {
	s := float32(0)
	//kern:nounroll
	for i := t.ThreadIdx().X; i < n; i += 32 {
		s = gpu.FMA(x[i], y[i], s)
	}
	out[t.ThreadIdx().X] = s
}
