// Tensor cores and cp.async need sm_80; this file compiles for sm_75.
package target

// ARCH sm_75

import "github.com/gokern/kern/gpu"

//kern:kernel block=32
func MMA(t gpu.Thread, out []float32) {
	var a [4]uint32
	var b [2]uint32
	var c [4]float32
	d := gpu.MMAF16(t, a, b, c)         // ERROR UnsupportedTarget `mma.sync m16n8k16\) needs sm_80 or newer; compiling for sm_75`
	e := gpu.MMAS8(t, a, b, [4]int32{}) // ERROR UnsupportedTarget "needs sm_80"
	out[t.Lane()] = d[0] + float32(e[0])
}

//kern:kernel block=32
func Async(t gpu.Thread, x []float32) {
	s := gpu.Shared[float32](t, 32)
	gpu.CpAsync(t, &s[t.Lane()], &x[t.GlobalX()], 4) // ERROR UnsupportedTarget "gpu.CpAsync \\(cp.async\\) needs sm_80"
	gpu.CpAsyncCommit(t)                             // ERROR UnsupportedTarget "needs sm_80"
	gpu.CpAsyncWait(t, 0)                            // ERROR UnsupportedTarget "needs sm_80"
	t.Sync()
	x[t.GlobalX()] = s[31-t.Lane()] + float32(gpu.LdMatrixX1(t, &s[0]))
}
