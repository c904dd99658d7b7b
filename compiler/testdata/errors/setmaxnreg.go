// setmaxnreg takes a constant count, a multiple of 8 in 24..256, and is a
// warp collective.
package setmaxnreg

// ARCH sm_90a

import "github.com/gokern/kern/gpu"

//kern:kernel block=128
func Split(t gpu.Thread, out []int32, n int) {
	gpu.SetMaxNRegDec(t, n)   // ERROR BadIntrinsicArg "needs a constant register count, a multiple of 8 in 24..256"
	gpu.SetMaxNRegDec(t, 16)  // ERROR BadIntrinsicArg "a multiple of 8 in 24..256"
	gpu.SetMaxNRegInc(t, 236) // ERROR BadIntrinsicArg "a multiple of 8 in 24..256"
	if t.Lane() == 0 {
		gpu.SetMaxNRegInc(t, 240) // ERROR DivergentBarrier "warp collective"
	}
	out[t.ThreadIdx().X] = 1
}
