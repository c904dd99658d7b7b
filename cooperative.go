package kern

// Cooperative launches: a kernel that calls gpu.GridSync
// (KernelSpec.Cooperative) needs every block of its grid resident at once,
// and the two words of its grid barrier (compiler/lower_grid.go) passed as
// a hidden last parameter.
//
// The barrier words live in slots of 8 bytes that the device hands out
// per queue (launches on one queue run one after another, so they may
// share one) and per captured launch (a graph may be replayed on any
// queue, so a captured launch keeps a slot of its own). A launch on a
// queue clears its slot first, on its queue (a memset ahead of the
// kernel), so a launch that failed halfway through a round leaves nothing
// behind. A capture takes its launches' slots from regions of
// gridRegionSlots and clears a region once, ahead of the region's first
// launch, not each slot ahead of its own: a graph of one cooperative
// launch a layer (llm/qwen3's persistent decode) then has one memset node
// in all, and consecutive launches are kernel after kernel, which
// programmatic dependent launch may overlap (pdl.go). Slots are carved
// from 4 KiB allocations and kept until the device closes: a graph may
// outlive the stream it was captured on.

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/gokern/kern/gpu"
)

// gridSlotBytes is one barrier's size: the arrival count and a word
// compiler/lower_grid.go no longer uses, two u32.
const gridSlotBytes = 8

const gridChunkBytes = 4096

// gridRegionSlots is how many slots a capture clears at once: a Qwen3
// model of up to 64 layers replays one memset a graph.
const gridRegionSlots = 64

// emuCooperativeBlocks is the most blocks a cooperative launch may have on
// the emulator and in native mode, which run each block of such a launch
// on a goroutine of its own: about an H100's SM count, so that a grid
// sized for the emulator is not far from one sized for a GPU.
const emuCooperativeBlocks = 128

// gridSlots hands out barrier slots.
type gridSlots struct {
	mu      sync.Mutex
	chunk   uint64 // current allocation
	used    int    // bytes of it handed out
	byQueue map[any]uint64
}

// gridSlot returns the barrier slot for a launch on q, and the bytes from
// clearAt on that the launch clears ahead of its kernel (none for a
// captured launch whose region an earlier launch of the capture clears).
func (d *Device) gridSlot(q Queue) (slot, clearAt uint64, clearBytes int, err error) {
	g := &d.grid
	g.mu.Lock()
	defer g.mu.Unlock()
	s := queueStream(q)
	if s != nil && s.capturing {
		if s.gridLeft == 0 {
			if s.gridRegion, err = d.carveGrid(gridRegionSlots * gridSlotBytes); err != nil {
				return 0, 0, 0, err
			}
			s.gridLeft = gridRegionSlots
			clearAt, clearBytes = s.gridRegion, gridRegionSlots*gridSlotBytes
		}
		slot = s.gridRegion + uint64(gridRegionSlots-s.gridLeft)*gridSlotBytes
		s.gridLeft--
		return slot, clearAt, clearBytes, nil
	}
	key := q.stream()
	if a, ok := g.byQueue[key]; ok {
		return a, a, gridSlotBytes, nil
	}
	a, err := d.carveGrid(gridSlotBytes)
	if err != nil {
		return 0, 0, 0, err
	}
	if g.byQueue == nil {
		g.byQueue = map[any]uint64{}
	}
	g.byQueue[key] = a
	return a, a, gridSlotBytes, nil
}

// carveGrid hands out n bytes of barrier memory (n divides
// gridChunkBytes), allocating a chunk when the current one is used up.
// Called with d.grid.mu held.
func (d *Device) carveGrid(n int) (uint64, error) {
	g := &d.grid
	if g.chunk == 0 || g.used+n > gridChunkBytes {
		a, err := d.b.alloc(gridChunkBytes)
		if err != nil {
			return 0, fmt.Errorf("allocating grid barriers: %w", err)
		}
		g.chunk, g.used = a, 0
	}
	a := g.chunk + uint64(g.used)
	g.used += n
	return a, nil
}

// prepareCooperative checks a cooperative launch's grid against what the
// device holds at once and gives it its barrier slot, appended to the
// packed parameters as the hidden last one.
func (k *Kernel) prepareCooperative(q Queue, dev *Device, l *launch) error {
	n := l.blocks.X * l.blocks.Y * l.blocks.Z
	limit, err := dev.cooperativeLimit(l)
	if err != nil {
		return k.errorf("%w", err)
	}
	if n > limit {
		return k.errorf("a cooperative kernel (it calls gpu.GridSync) needs every block resident at once: %d blocks of %d threads, the device holds at most %d (size the grid with MaxCooperativeBlocks)",
			n, l.threads.X*l.threads.Y*l.threads.Z, limit)
	}
	slot, clearAt, clearBytes, err := dev.gridSlot(q)
	if err != nil {
		return k.errorf("%w", err)
	}
	l.gridSlot, l.gridClear, l.gridClearBytes = slot, clearAt, clearBytes
	for len(l.params)%8 != 0 {
		l.params = append(l.params, 0)
	}
	l.params = binary.LittleEndian.AppendUint64(l.params, slot)
	return nil
}

// cooperativeSizer is a backend that knows how many blocks of a kernel
// its device holds at once (the CUDA occupancy calculator).
type cooperativeSizer interface {
	cooperativeBlocks(l *launch) (int, error)
}

func (d *Device) cooperativeLimit(l *launch) (int, error) {
	if c, ok := d.b.(cooperativeSizer); ok {
		return c.cooperativeBlocks(l)
	}
	return emuCooperativeBlocks, nil
}

// MaxCooperativeBlocks returns how many blocks of block threads, with
// shared bytes of dynamic shared memory each, the device holds at once
// for k: the largest grid a kernel that calls gpu.GridSync may be
// launched with. On a GPU that is the occupancy calculator's blocks per
// SM times the SMs (so a persistent kernel launches exactly that many);
// on the emulator and in native mode a fixed 128.
func (k *Kernel) MaxCooperativeBlocks(q Queue, block gpu.Dim3, shared int) (int, error) {
	if q == nil || q.device() == nil {
		return 0, fmt.Errorf("kern: %s: nil device", k.spec.Name)
	}
	dev := q.device()
	if err := dev.usable(); err != nil {
		return 0, k.errorf("%w", err)
	}
	l := &launch{k: k, blocks: gpu.Dim3{X: 1, Y: 1, Z: 1}, threads: ones(block), shared: shared}
	l.entry = k.spec.Entry
	if err := k.checkShape(dev, l); err != nil {
		return 0, err
	}
	mod, err := dev.module(k.spec.Module)
	if err != nil {
		return 0, err
	}
	l.mod = mod
	n, err := dev.cooperativeLimit(l)
	if err != nil {
		return 0, k.errorf("%w", err)
	}
	return n, nil
}
