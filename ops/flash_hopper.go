package ops

// FlashAttention on Hopper (compute capability 9.0): the sm_90a kernels
// of ops/internal/attnh (TMA, mbarrier pipeline, wgmma; attnh/flash.go
// describes them) replace the sm_80 ones, with the same arguments,
// results, masks and error behaviour. The op chooses them from the
// device's compute capability, as it chooses tile shapes; the emulator
// runs them when a test sets forceHopperAttention.

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/attnh"
)

// flashHK is the Hopper prefill kernel per element type and head dim.
var flashHK = [2][2]*kern.Kernel{
	{attnh.FlashF16D64Kernel.Kernel(), attnh.FlashF16D128Kernel.Kernel()},
	{attnh.FlashBF16D64Kernel.Kernel(), attnh.FlashBF16D128Kernel.Kernel()},
}

// forceHopperAttention makes FlashAttention use the sm_90a kernels on the
// emulator (which runs every target); tests set it. hopperKernelForTest,
// when set, replaces the kernel (tests run variants with planted bugs).
var (
	forceHopperAttention bool
	hopperKernelForTest  *kern.Kernel
)

// useHopperAttention reports whether FlashAttention on dev runs attnh:
// a GPU of compute capability 9.0 (sm_90a modules load on nothing else;
// the device's name carries its sm_XY), or the emulator when forced.
func useHopperAttention(dev *kern.Device) bool {
	switch dev.Kind() {
	case "cuda":
		return strings.Contains(dev.Name(), "(sm_90,")
	case "emu":
		return forceHopperAttention
	}
	return false
}

// flashHopper launches attnh after FlashAttention has checked the
// arguments. q, k and v are read through TMA tensor maps (tensorMaps).
func flashHopper[T Half16](queue kern.Queue, s *shape, out, q, k, v *kern.Buffer[T], lse, lseArg *kern.Buffer[float32], cuSeqQ, cuSeqK *kern.Buffer[int32], a Attention, hd, batch int) error {
	totalQ, totalK := q.Len()/(a.Heads*a.HeadDim), k.Len()/(a.KVHeads*a.HeadDim)
	maps, err := tensorMaps([3]*kern.Buffer[T]{q, k, v}, [3]int{totalQ, totalK, totalK}, [3]int{a.Heads, a.KVHeads, a.KVHeads}, a.HeadDim)
	if err != nil {
		return fmt.Errorf("%s: %w", s.op, err)
	}
	rows := attnh.FlashM + 2*attnh.Stages*attnh.FlashN // the Q tile and the K/V stages
	grid := kern.Blocks(gpu.Dim3{X: (a.MaxSeqQ + attnh.FlashM - 1) / attnh.FlashM, Y: a.Heads, Z: batch}, gpu.Dim3{X: attnh.Threads, Y: 1, Z: 1}).
		WithShared(rows * a.HeadDim * 2)
	kf := flashHK[dtypeIndex[T]()-1][hd]
	if hopperKernelForTest != nil {
		kf = hopperKernelForTest
	}
	return s.launch(kf, queue, grid,
		bufArg(out), bufArg(lseArg), bufArg(q), bufArg(k), bufArg(v), bufArg(maps[0]), bufArg(maps[1]), bufArg(maps[2]), bufArg(cuSeqQ), bufArg(cuSeqK),
		intArg(totalQ), intArg(totalK), intArg(a.Heads), intArg(a.KVHeads), f32Arg(a.scale()*math.Log2E), kern.ScalarArg(a.Causal), kern.ScalarArg(lse != nil))
}

// Tensor maps: a map describes a buffer as rows of heads·headDim values
// (boxes of 64 rows × 64 values, 128-byte swizzle) and lives in a
// 16-word device buffer. Making one is an allocation and a copy, too slow
// per call, so maps are kept per buffer and shape. A launch names q, k and
// v as arguments, so a freed buffer is refused before its stale map is
// used. The cache holds at most tmapCacheMax maps; past that it frees them
// all and starts again (freeing device memory waits for the device, so no
// running kernel still reads them).
const tmapCacheMax = 64

type tmapKey struct {
	buf              any // the *kern.Buffer
	rows, heads, dim int
}

var tmapCache struct {
	sync.Mutex
	m map[tmapKey]*kern.Buffer[uint64]
}

// tensorMaps returns the maps of bufs[i] as rows[i] rows of heads[i]·hd
// values, from the cache or made and cached; the three are looked up
// together, so a full cache is emptied before any of them is taken.
func tensorMaps[T Half16](bufs [3]*kern.Buffer[T], rows, heads [3]int, hd int) ([3]*kern.Buffer[uint64], error) {
	var maps [3]*kern.Buffer[uint64]
	tmapCache.Lock()
	defer tmapCache.Unlock()
	misses := 0
	for i, b := range bufs {
		if _, ok := tmapCache.m[tmapKey{b, rows[i], heads[i], hd}]; !ok {
			misses++
		}
	}
	if tmapCache.m == nil || len(tmapCache.m)+misses > tmapCacheMax {
		for _, m := range tmapCache.m {
			m.Free()
		}
		tmapCache.m = map[tmapKey]*kern.Buffer[uint64]{}
	}
	for i, b := range bufs {
		key := tmapKey{b, rows[i], heads[i], hd}
		m, ok := tmapCache.m[key]
		if !ok {
			var err error
			m, err = kern.TensorMap2DOf(b, gpu.TensorMap2D{ElemBytes: 2, Dims: [2]int{heads[i] * hd, max(rows[i], 1)},
				RowBytes: heads[i] * hd * 2, Box: [2]int{attnh.Chunk, attnh.Box}, Swizzle: gpu.Swizzle128B})
			if err != nil {
				return maps, err
			}
			tmapCache.m[key] = m
		}
		maps[i] = m
	}
	return maps, nil
}

// FlashAttentionKernels names the prefill kernels FlashAttention runs on
// dev, for benchmarks and logs.
func FlashAttentionKernels(dev *kern.Device) string {
	if useHopperAttention(dev) {
		return "sm_90a (TMA, mbarriers, wgmma: ops/internal/attnh)"
	}
	return "sm_80 (cp.async, mma.sync: ops/internal/attnk)"
}
