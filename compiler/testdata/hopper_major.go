// arch: sm_90a

// MN-major (transposed) wgmma operands: attention's P·V with P from
// registers and V row-major in shared memory (128-byte swizzle), and a
// descriptor-A product with both operands MN-major.
package hopper_major

import "github.com/gokern/kern/gpu"

// PV multiplies a 64×16 P (registers) by a 16×64 V stored row-major
// (16 rows of 64 values, 128-byte swizzled: MN-major, sbo 1024), then
// again with A = Pᵀ stored MN-major in shared memory.
//
//kern:kernel block=128
func PV(t gpu.Thread, p []uint32, v []uint16, out []float32) {
	sv := gpu.Shared[uint16](t, 1024)
	i := t.ThreadIdx().X
	for j := i; j < 1024 && j < len(v); j += 128 {
		sv[j] = v[j]
	}
	gpu.FenceProxyAsync(t)
	t.Sync()
	dv := gpu.WGMMADesc(t, &sv[0], 0, 1024, gpu.Swizzle128B)
	var fa [4]uint32
	if 4*i+3 < len(p) {
		fa = [4]uint32{p[4*i], p[4*i+1], p[4*i+2], p[4*i+3]}
	}
	var acc [32]float32
	gpu.WGMMAFence(t)
	gpu.WGMMAF16RegAMajor(t, &acc, fa, dv, false, gpu.MNMajor)
	gpu.WGMMABF16Major(t, &acc, dv, dv, true, gpu.MNMajor, gpu.MNMajor)
	gpu.WGMMACommitGroup(t)
	gpu.WGMMAWaitGroup(t, 0)
	//kern:unroll
	for j := range 32 {
		if 32*i+j < len(out) {
			out[32*i+j] = acc[j]
		}
	}
}
