// TMA stores and bulk groups need sm_90; the wait counts are constants.
package tmastore

// ARCH sm_80

import "github.com/gokern/kern/gpu"

//kern:kernel block=32
func Store(t gpu.Thread, tmap []uint64, n int) {
	s := gpu.Shared[uint16](t, 1024)
	gpu.TMAStore2D(t, &tmap[0], 0, 0, &s[0]) // ERROR UnsupportedTarget `gpu.TMAStore2D \(cp.async.bulk.tensor\) needs sm_90`
	gpu.BulkCommitGroup(t)                   // ERROR UnsupportedTarget "needs sm_90"
	gpu.BulkWaitGroupRead(t, n)              // ERROR BadIntrinsicArg "needs a constant group count"
	gpu.BulkWaitGroup(t, 0)                  // ERROR UnsupportedTarget "needs sm_90"
}
