package bce

import "github.com/gokern/kern/gpu"

//kern:kernel block=64
func Shift(t gpu.Thread, x, out []float32, d int) {
	s := gpu.Shared[float32](t, 64)
	s[t.ThreadIdx().X] = 1
	if i := t.GlobalX(); i < len(out) {
		out[i] = x[i+d] + s[(t.ThreadIdx().X+d)&63]
	}
}
