package ops

// Matmul's Hopper version (v3, ops/internal/mmh): TMA + wgmma + an
// mbarrier pipeline, warp-specialised and persistent, for compute
// capability 9.0. It takes the shapes v2 takes, b as W[N,K] (WeightNK)
// or B[K,N] (RowMajorKN: mmh's GemmKN kernels, B an MN-major wgmma
// operand). Its operands reach the kernel as tensor maps (kern's
// Device.TensorMap, cached per buffer and shape), whose 16-byte row
// stride is the k%8 == 0 (and, for B[K,N], n%8 == 0) that v2 needs too.

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/gemvtc"
	"github.com/gokern/kern/ops/internal/mmh"
)

// mmHopper is v3, the sm_90a kernel (see matmulCheck's versions).
const mmHopper = 4

// mmhK are v3's kernels, indexed [b: W[N,K], B[K,N]][input: f16,
// bf16][output: f32, the input type].
var mmhK = [2][2][2]*kern.Kernel{{
	{mmh.GemmF16F32Kernel.Kernel(), mmh.GemmF16F16Kernel.Kernel()},
	{mmh.GemmBF16F32Kernel.Kernel(), mmh.GemmBF16BF16Kernel.Kernel()},
}, {
	{mmh.GemmKNF16F32Kernel.Kernel(), mmh.GemmKNF16F16Kernel.Kernel()},
	{mmh.GemmKNBF16F32Kernel.Kernel(), mmh.GemmKNBF16BF16Kernel.Kernel()},
}}

// hopperPick returns v3 in place of version v where the Hopper kernels
// apply (hopperKernels) and the shape is one v3 runs: v2's shapes, in
// either layout. The decode shapes keep GEMV and odd k (or, for B[K,N],
// odd n) keeps v1.
func hopperPick(v int, hopper bool) int {
	if v == mmV2 && hopper {
		return mmHopper
	}
	return v
}

// hopperStages is v3's pipeline depth on dev: as many stages of
// mmh.StageBytes as its shared memory holds next to the epilogue staging
// and the kernel's 1 KiB of static mbarriers, at most mmh.MaxStages; 4 on
// an H100, 2 in the emulator's 99 KiB.
func hopperStages(dev *kern.Device) int {
	return min(mmh.MaxStages, (dev.Limits().MaxSharedPerBlock-1024-mmh.EpiBytes)/mmh.StageBytes)
}

// hopperBlocks is v3's grid for tiles output tiles: one persistent block
// per SM on a GPU. The emulator and native mode run one block, which then
// walks every tile: blocks run one after another there anyway, and the
// tests cover the persistent loop on every shape of more than one tile.
func hopperBlocks(dev *kern.Device, tiles int) int {
	return min(tiles, max(dev.Multiprocessors(), 1))
}

// matmulHopperRun launches v3 on checked arguments.
func matmulHopperRun[In Half16, O Float](s *shape, q kern.Queue, c *kern.Buffer[O], a, b *kern.Buffer[In], m, n, k int, o MatmulOpts[O]) error {
	dev := queueDevice(q)
	if dev == nil {
		return fmt.Errorf("%s: nil queue", s.op)
	}
	stages := hopperStages(dev)
	if stages < 2 {
		return fmt.Errorf("%s: the sm_90a kernel needs %d bytes of shared memory per block, %s allows %d", s.op, mmh.SharedBytes(2)+1024, dev, dev.Limits().MaxSharedPerBlock)
	}
	box := [2]int{mmh.BoxK, mmh.BoxRows}
	amap, err := dev.TensorMap(a, kern.TensorMapSpec{Dims: [2]int{k, m}, Box: box, Swizzle: gpu.Swizzle128B})
	if err != nil {
		return fmt.Errorf("%s: a: %w", s.op, err)
	}
	bspec, kn := kern.TensorMapSpec{Dims: [2]int{k, n}, Box: box, Swizzle: gpu.Swizzle128B}, 0
	if o.Layout == RowMajorKN {
		bspec, kn = kern.TensorMapSpec{Dims: [2]int{n, k}, Box: [2]int{mmh.KNBoxN, mmh.BoxK}, Swizzle: gpu.Swizzle128B}, 1
	}
	wmap, err := dev.TensorMap(b, bspec)
	if err != nil {
		return fmt.Errorf("%s: b: %w", s.op, err)
	}
	bias, res, err := optionalBufs(s, q, o.Bias, o.Residual)
	if err != nil {
		return err
	}
	ii, oi := inIndex[In](), min(dtypeIndex[O](), 1)
	tiles := ceilDiv(n, mmh.BN) * ceilDiv(m, mmh.BM)
	grid := kern.Blocks(gpu.Dim3{X: hopperBlocks(dev, tiles), Y: 1, Z: 1}, gpu.Dim3{X: mmh.Threads, Y: 1, Z: 1}).WithShared(mmh.SharedBytes(stages))
	return s.launch(mmhK[kn][ii][oi], q, grid, bufArg(c), amap, wmap, bias, res, intArg(m), intArg(n), intArg(k), intArg(int(o.Act)), intArg(stages))
}

// MatmulVersion names the kernel Matmul runs for an m×n×k product with
// b in layout on dev: "v1", "gemv v2" (or "gemv v1" while GEMVv1 is set),
// "v2 128x128x32" (the sm_80 GEMM and its tile), or "v3 sm_90a" (the
// Hopper GEMM; Matmul still falls back to v2 if the driver turns out to
// have no tensor maps). kern bench prints it beside its timings.
func MatmulVersion(dev *kern.Device, m, n, k int, layout BLayout) string {
	v := mmV2
	switch {
	case k%8 != 0 || (layout == RowMajorKN && n%8 != 0):
		v = mmV1
	case m <= gemvtc.MaxM && layout == WeightNK:
		v = gemvVersion()
	}
	v = hopperPick(v, hopperKernels(dev))
	switch v {
	case mmV1:
		return "v1"
	case mmGEMV:
		return "gemv v2"
	case mmGEMVv1:
		return "gemv v1"
	case mmHopper:
		return "v3 sm_90a"
	}
	return "v2 " + pickConfig(m, n).name
}
