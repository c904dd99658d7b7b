package ops

// FlashAttention on Hopper (compute capability 9.0): the sm_90a kernels
// of ops/internal/attnh (TMA, mbarrier pipeline, wgmma; attnh/flash.go
// describes them) replace the sm_80 ones, with the same arguments,
// results, masks and error behaviour. The op chooses them from the
// device's compute capability (hopperKernels, hopper.go), as Matmul
// does; the emulator runs them when a test sets forceHopper.

import (
	"fmt"
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/attnh"
	"github.com/gokern/kern/ops/internal/attnh64"
)

// flashHK is the Hopper prefill kernel per element type at head dim 128
// (attnh: K/V tiles of 128 keys).
var flashHK = [2]*kern.Kernel{attnh.FlashF16D128Kernel.Kernel(), attnh.FlashBF16D128Kernel.Kernel()}

// flashHK64 is the first version (attnh64: K/V tiles of 64 keys) per
// element type and head dim: head dim 64 always, 128 when
// AttentionHopperVersion is 1.
var flashHK64 = [2][2]*kern.Kernel{
	{attnh64.FlashF16D64Kernel.Kernel(), attnh64.FlashF16D128Kernel.Kernel()},
	{attnh64.FlashBF16D64Kernel.Kernel(), attnh64.FlashBF16D128Kernel.Kernel()},
}

// AttentionHopperVersion chooses FlashAttention's Hopper kernel at head
// dim 128, so that kern bench attention can time the versions on one
// GPU: 0 the current one (ops/internal/attnh: 128-key tiles,
// FlashAttention-3's order), 1 the first (ops/internal/attnh64: 64-key
// tiles). On an H100 (docs/performance-gpu.md) 0 ran 629 TFLOP/s, 1 466,
// and a second version (128-key tiles in the first's order, since
// removed) 591. Set it only between launches; it changes nothing off
// Hopper, nor at head dim 64 (always attnh64).
var AttentionHopperVersion int

// hopperKernelForTest, when set, replaces the kernel (tests run variants
// with planted bugs).
var hopperKernelForTest *kern.Kernel

// flashHopper launches attnh after FlashAttention has checked the
// arguments. q, k and v are read through TMA tensor maps (Device.TensorMap:
// cached per device, address and shape; a map keeps its buffer alive, and
// a freed buffer is refused when its map is asked for).
func flashHopper[T Half16](queue kern.Queue, s *shape, out, q, k, v *kern.Buffer[T], lse, lseArg *kern.Buffer[float32], cuSeqQ, cuSeqK *kern.Buffer[int32], a Attention, hd, batch int) error {
	totalQ, totalK := q.Len()/(a.Heads*a.HeadDim), k.Len()/(a.KVHeads*a.HeadDim)
	dev := cuSeqQ.Device()
	var maps [3]*kern.TensorMap
	for i, t := range []struct {
		name        string
		buf         *kern.Buffer[T]
		rows, heads int
	}{{"q", q, totalQ, a.Heads}, {"k", k, totalK, a.KVHeads}, {"v", v, totalK, a.KVHeads}} {
		var err error
		maps[i], err = dev.TensorMap(t.buf, kern.TensorMapSpec{Dims: [2]int{t.heads * a.HeadDim, max(t.rows, 1)},
			Box: [2]int{attnh.Chunk, attnh.Box}, Swizzle: gpu.Swizzle128B})
		if err != nil {
			return fmt.Errorf("%s: %s: %w", s.op, t.name, err)
		}
	}
	// The Q tile and the K/V stages.
	rows, threads, kf := attnh.FlashM+2*attnh.Stages*attnh.FlashN, attnh.Threads, flashHK[dtypeIndex[T]()-1]
	switch {
	case hd == 0 || AttentionHopperVersion == 1:
		rows, threads, kf = attnh64.FlashM+2*attnh64.Stages*attnh64.FlashN, attnh64.Threads, flashHK64[dtypeIndex[T]()-1][hd]
	}
	grid := kern.Blocks(gpu.Dim3{X: (a.MaxSeqQ + attnh.FlashM - 1) / attnh.FlashM, Y: a.Heads, Z: batch}, gpu.Dim3{X: threads, Y: 1, Z: 1}).
		WithShared(rows * a.HeadDim * 2)
	if hopperKernelForTest != nil {
		kf = hopperKernelForTest
	}
	return s.launch(kf, queue, grid,
		bufArg(out), bufArg(lseArg), bufArg(q), bufArg(k), bufArg(v), maps[0], maps[1], maps[2], bufArg(cuSeqQ), bufArg(cuSeqK),
		intArg(totalQ), intArg(totalK), intArg(a.Heads), intArg(a.KVHeads), f32Arg(a.scale()*math.Log2E), kern.ScalarArg(a.Causal), kern.ScalarArg(lse != nil))
}

// HopperAttention reports whether FlashAttention runs its sm_90a kernels
// on dev (where AttentionHopperVersion chooses among versions).
func HopperAttention(dev *kern.Device) bool { return hopperKernels(dev) }

// FlashAttentionKernels names the prefill kernels FlashAttention runs on
// dev, for benchmarks and logs.
func FlashAttentionKernels(dev *kern.Device) string {
	if hopperKernels(dev) {
		switch AttentionHopperVersion {
		case 1:
			return "sm_90a, first version (TMA, mbarriers, wgmma, 64-key tiles: ops/internal/attnh64)"
		}
		return "sm_90a (TMA, mbarriers, wgmma; head dim 128: 128-key tiles, ops/internal/attnh; 64: ops/internal/attnh64)"
	}
	return "sm_80 (cp.async, mma.sync: ops/internal/attnk)"
}
