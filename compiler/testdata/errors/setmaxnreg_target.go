// setmaxnreg is an sm_90a feature: sm_90 refuses it.
package setmaxnreg

// ARCH sm_90

import "github.com/gokern/kern/gpu"

//kern:kernel block=128
func Split(t gpu.Thread, out []int32) {
	gpu.SetMaxNRegInc(t, 232) // ERROR UnsupportedTarget `gpu.SetMaxNRegInc \(setmaxnreg\) needs sm_90a; compiling for sm_90`
	out[t.ThreadIdx().X] = 1
}
