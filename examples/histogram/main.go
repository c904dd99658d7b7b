// Command histogram counts the bytes of a buffer into 256 bins, first with
// one global atomic per byte, then with per-block bins in shared memory
// merged by global atomics, and checks both exactly against the host. It
// counts, on the emulator, how many atomics each version sends to global
// memory.
package main

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/examples/internal/exampleutil"
	"github.com/gokern/kern/gpu"
)

func main() {
	exampleutil.Main("histogram", func(dev *kern.Device) error {
		n := 1 << 26
		if dev.Kind() != "cuda" {
			n = 1 << 20
		}
		return run(dev, n, 64)
	})
}

type version struct {
	name   string
	launch func(q kern.Queue, grid kern.Grid, data *kern.Buffer[uint8], hist *kern.Buffer[uint32]) error
}

var versions = []version{
	{"HistogramGlobal", HistogramGlobalKernel.Launch},
	{"HistogramShared", HistogramSharedKernel.Launch},
}

// run histograms n bytes on dev with a grid of the given number of
// 256-thread blocks.
func run(dev *kern.Device, n, blocks int) error {
	// Bytes from a narrow bell around 128, as the pixels of a dim image:
	// most land in a few dozen bins, the worst case for contention.
	rng := rand.New(rand.NewPCG(11, 12))
	xs := make([]uint8, n)
	want := make([]uint32, bins)
	for i := range xs {
		xs[i] = uint8(max(0, min(255, math.Round(128+rng.NormFloat64()*12))))
		want[xs[i]]++
	}
	data, err := kern.Upload(dev, xs)
	if err != nil {
		return err
	}
	defer data.Free()
	grid := kern.Blocks(gpu.Dim3{X: blocks}, gpu.Dim3{X: bins})

	for _, v := range versions {
		hist, err := kern.Alloc[uint32](dev, bins) // zeroed
		if err != nil {
			return err
		}
		if err := v.launch(dev, grid, data, hist); err != nil {
			return err
		}
		got, err := hist.Download()
		hist.Free()
		if err != nil {
			return err
		}
		for b := range bins {
			if got[b] != want[b] {
				return fmt.Errorf("%s: bin %d = %d, want %d", v.name, b, got[b], want[b])
			}
		}
	}
	peak := 0
	for b := range bins {
		if want[b] > want[peak] {
			peak = b
		}
	}
	fmt.Printf("histogram of %d bytes on %d blocks: both versions match the host count exactly\n", n, blocks)
	fmt.Printf("busiest bin %d holds %d bytes (%.1f%%)\n", peak, want[peak], 100*float64(want[peak])/float64(n))

	counts, err := countAtomics(xs[:min(n, 1<<16)], blocks)
	if err != nil {
		return err
	}
	fmt.Printf("atomics per version on %d bytes (counted on the emulator):\n", min(n, 1<<16))
	for _, v := range versions {
		c := counts[v.name]
		fmt.Printf("  %-16s %7d to global memory, %7d to shared memory\n", v.name, c.global, c.shared)
	}
	if dev.Kind() != "cuda" {
		fmt.Println("(timings are only meaningful on a GPU; run there to see GB/s)")
		return nil
	}
	return timeVersions(dev, data, grid)
}

// timeVersions prints each version's time and input bandwidth on dev.
func timeVersions(dev *kern.Device, data *kern.Buffer[uint8], grid kern.Grid) error {
	hist, err := kern.Alloc[uint32](dev, bins)
	if err != nil {
		return err
	}
	defer hist.Free()
	for _, v := range versions {
		const reps = 20
		if err := dev.Sync(); err != nil {
			return err
		}
		start := time.Now()
		for range reps { // the counts pile up; only the time matters here
			if err := v.launch(dev, grid, data, hist); err != nil {
				return err
			}
		}
		if err := dev.Sync(); err != nil {
			return err
		}
		sec := time.Since(start).Seconds() / reps
		fmt.Printf("%-16s %8.1f µs  %7.1f GB/s of input\n", v.name, sec*1e6, float64(data.Len())/sec/1e9)
	}
	return nil
}

// atomicCounts are the thread-level atomic operations of a kernel, by
// state space.
type atomicCounts struct{ global, shared int64 }

// countAtomics runs both versions on an emulator whose observer counts
// the lanes of every atomic instruction.
func countAtomics(xs []uint8, blocks int) (map[string]atomicCounts, error) {
	obs := &atomicCounter{}
	dev := kern.OpenEmulator(emu.Options{Observer: obs})
	defer dev.Close()
	data, err := kern.Upload(dev, xs)
	if err != nil {
		return nil, err
	}
	out := map[string]atomicCounts{}
	for _, v := range versions {
		hist, err := kern.Alloc[uint32](dev, bins)
		if err != nil {
			return nil, err
		}
		obs.global.Store(0)
		obs.shared.Store(0)
		if err := v.launch(dev, kern.Blocks(gpu.Dim3{X: blocks}, gpu.Dim3{X: bins}), data, hist); err != nil {
			return nil, err
		}
		out[v.name] = atomicCounts{obs.global.Load(), obs.shared.Load()}
	}
	return out, nil
}

// atomicCounter is an emu.Observer counting atomic operations per space.
type atomicCounter struct{ global, shared atomic.Int64 }

func (c *atomicCounter) Step(*emu.Step) {}

func (c *atomicCounter) Access(a *emu.Access) {
	if a.Kind != emu.AccessAtomic {
		return
	}
	n := int64(bits.OnesCount32(a.Mask))
	switch a.Space {
	case emu.Global:
		c.global.Add(n)
	case emu.Shared:
		c.shared.Add(n)
	}
}
