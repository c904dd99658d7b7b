// arch: sm_90a

// setmaxnreg: a warp-specialised block of two warpgroups, the first giving
// registers back, the second taking them.
package setmaxnreg

import "github.com/gokern/kern/gpu"

// Split: warpgroup 0 drops to 40 registers and writes its thread index,
// warpgroup 1 rises to 232 and writes twice its index.
//
//kern:kernel block=256 minblocks=1
func Split(t gpu.Thread, out []int32) {
	i := t.ThreadIdx().X
	if t.Warp()/4 == 0 {
		gpu.SetMaxNRegDec(t, 40)
		if i < len(out) {
			out[i] = int32(i)
		}
		return
	}
	gpu.SetMaxNRegInc(t, 232)
	if i < len(out) {
		out[i] = int32(2 * i)
	}
}
