package ops

// Matmul's Hopper version (v3, ops/internal/mmh): TMA + wgmma + an
// mbarrier pipeline, warp-specialised and persistent, for compute
// capability 9.0. It takes the shapes v2 takes, b as W[N,K] (WeightNK)
// or B[K,N] (RowMajorKN: mmh's GemmKN kernels, B an MN-major wgmma
// operand). Its operands reach the kernel as tensor maps (kern's
// Device.TensorMap, cached per buffer and shape), whose 16-byte row
// stride is the k%8 == 0 (and, for B[K,N], n%8 == 0) that v2 needs too.
//
// v3 has two block tiles: 128×256 (ops/internal/mmhw, W[N,K] only, tiles
// walked in strips of mmhw.Group tile rows) and 128×128 (ops/internal/mmh,
// both layouts, row-major tile order), the first Hopper GEMM, which
// B[K,N] always runs. For W[N,K] the default takes 128×256 where the
// shape makes enough of its tiles to fill the GPU (HopperTileAuto);
// MatmulHopperTile forces either, so that one GPU run of kern bench
// times both.

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/gemvtc"
	"github.com/gokern/kern/ops/internal/mmh"
	"github.com/gokern/kern/ops/internal/mmhw"
)

// mmHopper is v3, the sm_90a kernel (see matmulCheck's versions), with
// mmh's 128×128 tile; mmHopperWide is v3 with mmhw's 128×256 tile.
const (
	mmHopper     = 4
	mmHopperWide = 5
)

// HopperTile is a block tile (and tile order) of v3, the sm_90a GEMM.
type HopperTile int

const (
	// HopperTileAuto, the default, is HopperTile128x256 where it makes
	// more than half as many tiles as the device has SMs, else
	// HopperTile128x128: with fewer, a persistent grid of 128×256 tiles
	// leaves SMs idle that 128×128 tiles would use (1024³: 32 tiles
	// against 64 on 132 SMs); past it the wide tile's lower L2 traffic
	// per FLOP is expected to win (see hopperPick).
	HopperTileAuto HopperTile = iota
	// HopperTile128x256 is mmhw's kernel in strips of mmhw.Group tile
	// rows.
	HopperTile128x256
	// HopperTile128x256RowMajor is mmhw's kernel in mmh's row-major tile
	// order (strips of one row), to time the order apart from the tile.
	HopperTile128x256RowMajor
	// HopperTile128x128 is mmh's kernel, the first Hopper GEMM.
	HopperTile128x128
)

// HopperTiles are the tiles HopperTileAuto chooses from and their
// variants, for kern bench to time each.
var HopperTiles = []HopperTile{HopperTile128x256, HopperTile128x256RowMajor, HopperTile128x128}

func (t HopperTile) String() string {
	switch t {
	case HopperTileAuto:
		return "auto"
	case HopperTile128x256:
		return "128x256"
	case HopperTile128x256RowMajor:
		return "128x256 rowmajor"
	case HopperTile128x128:
		return "128x128"
	}
	return fmt.Sprintf("HopperTile(%d)", int(t))
}

// MatmulHopperTile is the tile Matmul runs v3 with for b in W[N,K]
// (B[K,N] always runs 128x128); an unknown value is HopperTileAuto. It
// is a knob for kern bench, which times the default and every other
// HopperTiles entry: set it before Matmul calls, never while one runs.
var MatmulHopperTile = HopperTileAuto

// mmhwK are the 128×256 kernels, indexed [input: f16, bf16][output: f32,
// the input type].
var mmhwK = [2][2]*kern.Kernel{
	{mmhw.GemmF16F32Kernel.Kernel(), mmhw.GemmF16F16Kernel.Kernel()},
	{mmhw.GemmBF16F32Kernel.Kernel(), mmhw.GemmBF16BF16Kernel.Kernel()},
}

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
// apply on dev (hopperKernels) and the m×n shape is one v3 runs: v2's
// shapes, in either layout. With b in W[N,K] the tile is
// MatmulHopperTile's where dev has the shared memory for 128×256 (every
// sm_90 GPU has; the emulator only when opened with it), else 128×128.
// The decode shapes keep GEMV and odd k (or, for B[K,N], odd n) keeps
// v1.
func hopperPick(v int, dev *kern.Device, layout BLayout, m, n int) int {
	if v != mmV2 || !hopperKernels(dev) {
		return v
	}
	if layout != WeightNK || hopperStages(dev, mmHopperWide) < 2 {
		return mmHopper
	}
	switch MatmulHopperTile {
	case HopperTile128x128:
		return mmHopper
	case HopperTile128x256, HopperTile128x256RowMajor:
		return mmHopperWide
	}
	// Auto. With t wide tiles on s SMs a persistent grid takes ⌈t/s⌉
	// rounds of wide tiles, each worth two rounds of narrow ones,
	// against ⌈2t/s⌉ narrow rounds: where 2t ≤ s narrow takes half the
	// rounds; beyond, the two differ by at most one narrow round (none
	// at 2048³–8192³ on 132 SMs) and the wide tile's quarter less L2
	// traffic per FLOP and half the epilogues per FLOP should decide (an
	// estimate the GPU run is to confirm). The emulator reports 0 SMs:
	// wide.
	if 2*ceilDiv(m, mmhw.BM)*ceilDiv(n, mmhw.BN) > dev.Multiprocessors() {
		return mmHopperWide
	}
	return mmHopper
}

// hopperGroup is the tile rows of a strip v3 128×256 walks (mmhw's
// header): 1, row-major, for HopperTile128x256RowMajor.
func hopperGroup() int {
	if MatmulHopperTile == HopperTile128x256RowMajor {
		return 1
	}
	return mmhw.Group
}

// hopperStages is v3's pipeline depth on dev: as many stages of
// stageBytes as its shared memory holds next to the epilogue staging
// (epiBytes) and the kernel's 1 KiB of static mbarriers, at most
// maxStages. For mmh 4 on an H100, 2 in the emulator's default 99 KiB;
// for mmhw 4 on an H100, 1 (too few: an error) in 99 KiB.
func hopperStages(dev *kern.Device, v int) int {
	if v == mmHopperWide {
		return min(mmhw.MaxStages, (dev.Limits().MaxSharedPerBlock-1024-mmhw.EpiBytes)/mmhw.StageBytes)
	}
	return min(mmh.MaxStages, (dev.Limits().MaxSharedPerBlock-1024-mmh.EpiBytes)/mmh.StageBytes)
}

// hopperBlocks is v3's grid for tiles output tiles: one persistent block
// per SM on a GPU. The emulator and native mode run one block, which then
// walks every tile: blocks run one after another there anyway, and the
// tests cover the persistent loop on every shape of more than one tile.
func hopperBlocks(dev *kern.Device, tiles int) int {
	return min(tiles, max(dev.Multiprocessors(), 1))
}

// matmulHopperRun launches v3 (v: mmHopper or mmHopperWide) on checked
// arguments.
func matmulHopperRun[In Half16, O Float](s *shape, v int, q kern.Queue, c *kern.Buffer[O], a, b *kern.Buffer[In], m, n, k int, o MatmulOpts[O]) error {
	dev := queueDevice(q)
	if dev == nil {
		return fmt.Errorf("%s: nil queue", s.op)
	}
	wide := v == mmHopperWide
	stages := hopperStages(dev, v)
	if stages < 2 {
		need := mmh.SharedBytes(2) + 1024
		if wide {
			need = mmhw.SharedBytes(2) + 1024
		}
		return fmt.Errorf("%s: the sm_90a kernel (v3 %s) needs %d bytes of shared memory per block, %s allows %d", s.op, hopperName(v), need, dev, dev.Limits().MaxSharedPerBlock)
	}
	// Both kernels read a and W[N,K] through the same 64×128 boxes (mmhw
	// copies two per stage of W), so their maps are the same cached ones.
	box := [2]int{mmh.BoxK, mmh.BoxRows}
	amap, err := dev.TensorMap(a, kern.TensorMapSpec{Dims: [2]int{k, m}, Box: box, Swizzle: gpu.Swizzle128B})
	if err != nil {
		return fmt.Errorf("%s: a: %w", s.op, err)
	}
	bspec, kn := kern.TensorMapSpec{Dims: [2]int{k, n}, Box: box, Swizzle: gpu.Swizzle128B}, 0
	if o.Layout == RowMajorKN {
		if wide {
			return fmt.Errorf("%s: v3 128x256 has no B[K,N] kernel", s.op) // hopperPick never asks
		}
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
	args := []kern.Arg{bufArg(c), amap, wmap, bias, res, intArg(m), intArg(n), intArg(k), intArg(int(o.Act)), intArg(stages)}
	if wide {
		tiles := ceilDiv(n, mmhw.BN) * ceilDiv(m, mmhw.BM)
		grid := kern.Blocks(gpu.Dim3{X: hopperBlocks(dev, tiles), Y: 1, Z: 1}, gpu.Dim3{X: mmhw.Threads, Y: 1, Z: 1}).WithShared(mmhw.SharedBytes(stages))
		return s.launch(mmhwK[ii][oi], q, grid, append(args, intArg(hopperGroup()))...)
	}
	tiles := ceilDiv(n, mmh.BN) * ceilDiv(m, mmh.BM)
	grid := kern.Blocks(gpu.Dim3{X: hopperBlocks(dev, tiles), Y: 1, Z: 1}, gpu.Dim3{X: mmh.Threads, Y: 1, Z: 1}).WithShared(mmh.SharedBytes(stages))
	return s.launch(mmhK[kn][ii][oi], q, grid, args...)
}

// hopperName is the tile part of v3's name for version v.
func hopperName(v int) string {
	if v == mmHopperWide {
		if MatmulHopperTile == HopperTile128x256RowMajor {
			return HopperTile128x256RowMajor.String()
		}
		return HopperTile128x256.String()
	}
	return HopperTile128x128.String()
}

// MatmulVersion names the kernel Matmul runs for an m×n×k product with
// b in layout on dev: "v1", "gemv v2" (or "gemv v1" while GEMVv1 is set,
// "gemv v3 split S" while GEMVv3 is, S its splits of K),
// "v2 128x128x32" (the sm_80 GEMM and its tile), or "v3 sm_90a 128x256"
// and the like (the Hopper GEMM and its HopperTile; Matmul still falls
// back to v2 if the driver turns out to
// have no tensor maps). kern bench prints it beside its timings.
func MatmulVersion(dev *kern.Device, m, n, k int, layout BLayout) string {
	v := mmV2
	switch {
	case k%8 != 0 || (layout == RowMajorKN && n%8 != 0):
		v = mmV1
	case m <= gemvtc.MaxM && layout == WeightNK:
		v = gemvVersion()
	}
	v = hopperPick(v, dev, layout, m, n)
	switch v {
	case mmV1:
		return "v1"
	case mmGEMV:
		return "gemv v2"
	case mmGEMVv1:
		return "gemv v1"
	case mmGEMVv3:
		return fmt.Sprintf("gemv v3 split %d", gemv3Plan(dev, n, k))
	case mmHopper, mmHopperWide:
		return "v3 sm_90a " + hopperName(v)
	}
	return "v2 " + pickConfig(m, n).name
}
