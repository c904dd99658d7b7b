// arch: sm_90a

// Hopper synchronisation: mbarrier phases with a transaction count, and
// the async-proxy fence.
package hopper

import "github.com/gokern/kern/gpu"

// Mbarrier: every thread arrives at an mbarrier whose phase also waits for
// 64 bytes announced by thread 0 and delivered by the last thread; each
// thread then waits for phase 0 and writes what it saw.
//
//kern:kernel block=64
func Mbarrier(t gpu.Thread, out []int32) {
	bar := gpu.Shared[uint64](t, 2)
	buf := gpu.Shared[int32](t, 64)
	i := t.ThreadIdx().X
	if i == 0 {
		gpu.MbarrierInit(t, &bar[0], 64)
	}
	t.Sync()
	buf[i] = int32(i * 3)
	gpu.FenceProxyAsync(t)
	if i == 0 {
		gpu.MbarrierArriveExpectTx(t, &bar[0], 64)
	} else {
		gpu.MbarrierArrive(t, &bar[0])
	}
	if i == 63 {
		gpu.MbarrierCompleteTx(t, &bar[0], 64)
	}
	phase := 0
	for !gpu.MbarrierTryWait(t, &bar[0], phase) {
	}
	phase ^= 1
	if i < len(out) {
		out[i] = buf[63-i]
	}
	t.Sync()
	if i == 0 {
		gpu.MbarrierInval(t, &bar[0])
	}
}
