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

// WGMMA multiplies a 64×16 A by a 16×64 B (stored 64×16, K-major) from
// shared memory with 128-byte swizzle, then again with A from registers
// into a 64×128 accumulator, and writes both results.
//
//kern:kernel block=128
func WGMMA(t gpu.Thread, a, b []uint16, out []float32) {
	sa := gpu.Shared[uint16](t, 4096)
	sb := gpu.Shared[uint16](t, 8192)
	i := t.ThreadIdx().X
	for j := i; j < 1024 && j < len(a); j += 128 {
		sa[j] = a[j]
	}
	for j := i; j < 2048 && j < len(b); j += 128 {
		sb[j] = b[j]
	}
	gpu.FenceProxyAsync(t)
	t.Sync()
	da := gpu.WGMMADesc(t, &sa[0], 0, 1024, gpu.Swizzle128B)
	db := gpu.WGMMADesc(t, &sb[0], 0, 1024, gpu.Swizzle128B)
	var acc [32]float32
	var wide [64]float32
	gpu.WGMMAFence(t)
	gpu.WGMMAF16(t, &acc, da, db, false)
	gpu.WGMMAF16(t, &acc, da+2, db+2, true)
	fa := [4]uint32{uint32(a[i%64]), uint32(a[i%64+1]), 0, 1}
	gpu.WGMMABF16RegA(t, &wide, fa, db, false)
	gpu.WGMMACommitGroup(t)
	gpu.WGMMAWaitGroup(t, 0)
	//kern:unroll
	for j := range 32 {
		if 96*i+j < len(out) {
			out[96*i+j] = acc[j]
		}
	}
	//kern:unroll
	for j := range 64 {
		if 96*i+32+j < len(out) {
			out[96*i+32+j] = wide[j]
		}
	}
}

// TMA loads a 64×64 box of 16-bit values with 128-byte swizzle through a
// tensor map, waits on the mbarrier, and copies the tile out.
//
//kern:kernel block=128
func TMA(t gpu.Thread, tmap []uint64, out []uint16, x, y int) {
	bar := gpu.Shared[uint64](t, 1)
	tile := gpu.Shared[uint16](t, 64*64)
	i := t.ThreadIdx().X
	if i == 0 {
		gpu.MbarrierInit(t, &bar[0], 1)
	}
	t.Sync()
	if i == 0 && len(tmap) >= 16 {
		gpu.MbarrierArriveExpectTx(t, &bar[0], 64*64*2)
		gpu.TMALoad2D(t, &tile[0], &tmap[0], x, y, &bar[0])
	}
	for !gpu.MbarrierTryWait(t, &bar[0], 0) {
	}
	for j := i; j < 64*64 && j < len(out); j += 128 {
		out[j] = tile[j]
	}
}
