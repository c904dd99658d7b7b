// arch: sm_90a

// TMA stores: a box loaded by TMA, doubled in shared memory, stored back
// by TMA and waited for through a bulk async-group.
package tmastore

import "github.com/gokern/kern/gpu"

//kern:kernel block=128
func Double(t gpu.Thread, inmap, outmap []uint64, x, y int) {
	bar := gpu.Shared[uint64](t, 1)
	s := gpu.Shared[uint16](t, 64*32)
	i := t.ThreadIdx().X
	if i == 0 {
		gpu.MbarrierInit(t, &bar[0], 1)
		gpu.FenceProxyAsync(t)
	}
	t.Sync()
	if i == 0 && len(inmap) >= 16 {
		gpu.MbarrierArriveExpectTx(t, &bar[0], 64*32*2)
		gpu.TMALoad2D(t, &s[0], &inmap[0], x, y, &bar[0])
	}
	for !gpu.MbarrierTryWait(t, &bar[0], 0) {
	}
	for j := i; j < 64*32; j += 128 {
		s[j] *= 2
	}
	gpu.FenceProxyAsync(t)
	t.Sync()
	if i == 0 && len(outmap) >= 16 {
		gpu.TMAStore2D(t, &outmap[0], x, y, &s[0])
		gpu.BulkCommitGroup(t)
		gpu.BulkWaitGroupRead(t, 0)
		gpu.BulkWaitGroup(t, 0)
	}
}
