package ops

// The decode GEMV's v3 (internal/gemv3): v2's tensor-core product on a
// grid split over K to fit the device's SMs, with the splits' partial sums
// finished in the same kernel by the block that arrives last. It runs in
// place of v2 while GEMVv3 is set; v2 stays the default until a GPU has
// timed the two side by side (kern bench matmul's "(v3)" rows).
//
// A split launch needs scratch in device memory: splits·m·n float32
// partial sums and one uint32 arrival counter per 16 columns, zero between
// launches (the last block of a tile resets its counter). Each queue
// (device or stream) has its own, made on first use and grown as shapes
// need: launches on one queue run in order, so they never share it
// while running; launches on two streams would, so they get two. Growing
// synchronises the queue before freeing the old scratch, so the first
// split launch of a shape larger than any before must not happen during
// a stream capture.

import (
	"fmt"
	"sync"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/gemv3"
)

// GEMVv3, when set (and GEMVv1 is not), makes Matmul (and MatmulVersion)
// take the decode GEMV's v3 (internal/gemv3) in place of v2, so that kern
// bench can time them side by side on a GPU. Set it only while no Matmul
// runs on another goroutine.
var GEMVv3 bool

// GEMVv3Splits, when positive, is the number of splits of K v3 launches
// with (at most one per 32 columns of K), in place of its plan
// (gemv3.Splits: by the device's SM count), so
// that kern bench can time a sweep and tests can run every split count on
// small shapes. Set it only while no Matmul runs on another goroutine.
var GEMVv3Splits int

// gemv3Plan is the number of splits of K v3 launches for an n×k weight on
// dev.
func gemv3Plan(dev *kern.Device, n, k int) int {
	if GEMVv3Splits > 0 {
		// No more splits than chunks of 32 columns: a split with none would
		// only add a block and a partial sum of zeros.
		return max(1, min(GEMVv3Splits, ceilDiv(k, 32)))
	}
	sms := 0
	if dev != nil {
		sms = dev.Multiprocessors()
	}
	return gemv3.Splits(sms, n, k)
}

// gemv3Scratch is one queue's split-K scratch.
type gemv3Scratch struct {
	mu   sync.Mutex
	part *kern.Buffer[float32]
	cnt  *kern.Buffer[uint32]
}

var gemv3Scratches sync.Map // kern.Queue → *gemv3Scratch

// gemv3Bufs returns q's scratch with room for np partial sums and nc
// counters, growing it if needed, and locked: the caller enqueues its
// launch and then calls unlock, so that no other goroutine's growth frees
// the buffers between the two.
func gemv3Bufs(q kern.Queue, dev *kern.Device, np, nc int) (part *kern.Buffer[float32], cnt *kern.Buffer[uint32], unlock func(), err error) {
	v, ok := gemv3Scratches.Load(q)
	if !ok { // LoadOrStore alone would allocate a scratch header per call
		v, _ = gemv3Scratches.LoadOrStore(q, &gemv3Scratch{})
	}
	sc := v.(*gemv3Scratch)
	sc.mu.Lock()
	if err := sc.grow(q, dev, np, nc); err != nil {
		sc.mu.Unlock()
		return nil, nil, nil, err
	}
	return sc.part, sc.cnt, sc.mu.Unlock, nil
}

// grow makes sc hold at least np partial sums and nc counters (sc.mu
// held).
func (sc *gemv3Scratch) grow(q kern.Queue, dev *kern.Device, np, nc int) error {
	if sc.part != nil && sc.part.Len() >= np && sc.cnt.Len() >= nc {
		return nil
	}
	if sc.part != nil {
		// Earlier launches on q may still read the old scratch.
		if err := queueSync(q); err != nil {
			return fmt.Errorf("growing the GEMV v3 scratch: %w", err)
		}
		np, nc = max(np, sc.part.Len()), max(nc, sc.cnt.Len())
		sc.part.Free()
		sc.cnt.Free()
		sc.part, sc.cnt = nil, nil
	}
	part, err := kern.Alloc[float32](dev, max(np, 1))
	if err != nil {
		return fmt.Errorf("the GEMV v3 scratch: %w", err)
	}
	cnt, err := kern.Alloc[uint32](dev, max(nc, 1)) // zeroed: no tile has arrivals
	if err != nil {
		part.Free()
		return fmt.Errorf("the GEMV v3 scratch: %w", err)
	}
	sc.part, sc.cnt = part, cnt
	return nil
}

// queueSync waits for the work queued on q.
func queueSync(q kern.Queue) error {
	switch v := q.(type) {
	case *kern.Device:
		return v.Sync()
	case *kern.Stream:
		return v.Sync()
	}
	return fmt.Errorf("unknown queue %T", q)
}

// matmulGEMV3Run launches v3 on checked arguments.
func matmulGEMV3Run[In Half16, O Float](s *shape, q kern.Queue, c *kern.Buffer[O], a, b *kern.Buffer[In], m, n, k int, o MatmulOpts[O], bias, res kern.Arg) error {
	dev := queueDevice(q)
	if dev == nil {
		return fmt.Errorf("%s: nil queue", s.op)
	}
	splits := gemv3Plan(dev, n, k)
	np, nc := gemv3.Workspace(splits, m, n)
	part, cnt, unlock, err := gemv3Bufs(q, dev, np, nc)
	if err != nil {
		return fmt.Errorf("%s: %w", s.op, err)
	}
	defer unlock()
	ii, oi := inIndex[In](), min(dtypeIndex[O](), 1)
	ks := &gemv3.Kernels
	if m <= 8 {
		ks = &gemv3.Narrow // one tile of x: three blocks per SM
	}
	tiles := ceilDiv(n, gemv3.Rows)
	grid := kern.Blocks(gpu.Dim3{X: tiles * splits, Y: 1, Z: 1}, gpu.Dim3{X: gemv3.Threads, Y: 1, Z: 1}).WithShared(gemv3.Shared)
	err = s.launch(ks[ii][oi], q, grid, bufArg(c), bufArg(a), bufArg(b), bias, res, bufArg(part), bufArg(cnt),
		intArg(m), intArg(n), intArg(k), intArg(int(o.Act)), intArg(splits))
	if err != nil && splits > 1 {
		// A launch stopped part way may leave arrivals counted: the next
		// launch on q starts from fresh, zeroed counters.
		gemv3Drop(q)
	}
	return err
}

// gemv3Drop forgets q's scratch; the next split launch on q makes a new
// one. The buffers are left to their finalizers: a failed launch may
// still hold them.
func gemv3Drop(q kern.Queue) {
	gemv3Scratches.Delete(q)
}
