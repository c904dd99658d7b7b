package emu

// Launching a kernel: checking the configuration, then running blocks on
// worker goroutines.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// LaunchConfig is a kernel launch's shape and arguments.
type LaunchConfig struct {
	Grid          [3]int // blocks; zero dimensions count as 1
	Block         [3]int // threads per block; zero dimensions count as 1
	DynamicShared int    // bytes of dynamic shared memory
	// Params is the packed parameter buffer: each parameter at its natural
	// alignment in .param order, as Module.Entry reports.
	Params []byte
	// PDL says the kernel is launched with programmatic dependent launch
	// on a GPU that has it: it may start before the launches before it
	// complete, and waits for them with griddepcontrol.wait. The emulator
	// runs launches one after another either way; Options.PDLcheck checks
	// the kernel's side of the contract.
	PDL bool
	// Cooperative runs every block at once, one goroutine each, as a GPU
	// keeps every block of a cooperative launch resident: the kernel's
	// blocks may wait for each other (a grid barrier, gpu.GridSync).
	Cooperative bool
}

// Device limits: threads as on sm_80, shared memory as on sm_90.
const (
	maxThreadsPerBlock = 1024
	maxSharedPerBlock  = 227 * 1024
)

// launch is the state shared by all blocks of one launch.
type launch struct {
	dev     *Device
	k       *kernel
	grid    [3]int
	block   [3]int
	dyn     int
	params  []byte
	gaddr   []uint64
	allocs  []*alloc
	obs     Observer
	nthr    int // threads per block
	nwarps  int
	shared  int // bytes of shared memory per block
	resBase int // offset of the reserved shared memory (kernel.reserved)
	failAt  atomic.Int64
	errMu   sync.Mutex
	err     error
	errAt   int64
	maxStep uint64
	san     *sanitizer
	// ctx is the launch's context; done is its Done channel, nil when
	// it can never be cancelled, so that blocks check it for free.
	ctx  context.Context
	done <-chan struct{}
	// coop marks a cooperative launch (cooperative.go).
	coop bool
	coopState
}

var errAborted = errors.New("aborted")

func dims(d [3]int) [3]int {
	for i := range d {
		if d[i] == 0 {
			d[i] = 1
		}
	}
	return d
}

// Launch runs entry of m to completion. Blocks run in parallel; a fault
// stops the launch and is returned as an *Error (the fault of the lowest
// numbered failing block, so results are deterministic).
func (d *Device) Launch(m *Module, entry string, c LaunchConfig) error {
	return d.LaunchContext(context.Background(), m, entry, c)
}

// LaunchContext is Launch stopped when ctx is done: no block starts after
// that, and running blocks stop within one scheduling quantum (a few
// thousand instructions per warp). The *Error then wraps ctx.Err() and
// names the instruction and Go line where the block was.
func (d *Device) LaunchContext(ctx context.Context, m *Module, entry string, c LaunchConfig) error {
	k, ok := m.kernels[entry]
	if !ok {
		if err := m.EntryErr(entry); err != nil {
			return err
		}
		return fmt.Errorf("emu: module has no entry %q", entry)
	}
	grid, block := dims(c.Grid), dims(c.Block)
	for i := 0; i < 3; i++ {
		if grid[i] < 0 || block[i] < 0 {
			return fmt.Errorf("emu: launch %s: negative dimension in grid %v block %v", entry, c.Grid, c.Block)
		}
	}
	nthr := block[0] * block[1] * block[2]
	if nthr > maxThreadsPerBlock {
		return fmt.Errorf("emu: launch %s: %d threads per block, the limit is %d", entry, nthr, maxThreadsPerBlock)
	}
	if block[2] > 64 || grid[1] > 65535 || grid[2] > 65535 || grid[0] > math.MaxInt32 {
		return fmt.Errorf("emu: launch %s: grid %v block %v exceeds device limits", entry, grid, block)
	}
	if r := k.info.ReqNTid; r[0] > 0 && (dims(r) != block) {
		return fmt.Errorf("emu: launch %s: block %v, but .reqntid is %v", entry, block, dims(r))
	}
	if mx := k.info.MaxNTid; mx[0] > 0 && nthr > mx[0]*max(mx[1], 1)*max(mx[2], 1) {
		return fmt.Errorf("emu: launch %s: %d threads per block exceeds .maxntid %v", entry, nthr, mx)
	}
	if c.DynamicShared < 0 {
		return fmt.Errorf("emu: launch %s: negative dynamic shared memory", entry)
	}
	shared := k.info.DynamicOffset + c.DynamicShared
	if c.DynamicShared == 0 {
		shared = k.sharedStatic
	}
	resBase := 0
	if k.reserved {
		resBase = alignUp(shared, 16)
		shared = resBase + reservedSmem
	}
	if shared > maxSharedPerBlock {
		return fmt.Errorf("emu: launch %s: %d bytes of shared memory per block, the limit is %d", entry, shared, maxSharedPerBlock)
	}
	if len(c.Params) != k.paramSize {
		return fmt.Errorf("emu: launch %s: %d bytes of parameters, want %d (%s)", entry, len(c.Params), k.paramSize, paramList(k.info.Params))
	}
	nblocks := grid[0] * grid[1] * grid[2]
	if nblocks == 0 || nthr == 0 {
		return nil
	}
	l := &launch{
		dev: d, k: k, grid: grid, block: block, dyn: c.DynamicShared,
		params: append([]byte(nil), c.Params...),
		gaddr:  d.moduleGlobals(m),
		allocs: d.snapshot(),
		obs:    d.opts.Observer,
		nthr:   nthr, nwarps: (nthr + 31) / 32, shared: shared, resBase: resBase,
		maxStep: d.opts.MaxSteps,
		ctx:     ctx, done: ctx.Done(),
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("emu: launch %s: %w", entry, err)
	}
	if d.opts.Memcheck || d.opts.Racecheck || d.opts.Synccheck || d.opts.PDLcheck {
		l.san = &sanitizer{memcheck: d.opts.Memcheck, race: d.opts.Racecheck, sync: d.opts.Synccheck, dev: d}
		if d.opts.PDLcheck {
			l.san.pdl = d.pdl.begin(c.PDL)
		}
	}
	if lo, ok := l.obs.(LaunchObserver); ok {
		lo.Launch(k.info.Name, grid, block)
	}
	l.failAt.Store(math.MaxInt64)
	workers := min(d.opts.Workers, nblocks)
	if c.Cooperative {
		workers = nblocks
		l.coop = true
		l.coopState.init(nblocks)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := newBlock(l)
			for {
				i := next.Add(1) - 1
				if i >= int64(nblocks) || i > l.failAt.Load() {
					return
				}
				if err := b.run(int(i)); err != nil && err != errAborted {
					l.fail(i, err)
				}
			}
		}()
	}
	wg.Wait()
	if l.san != nil && l.san.pdl != nil {
		d.pdl.end(l.san.pdl, k.info.Name)
	}
	if l.san != nil {
		// A launch that failed (a deadlock, a trap) still reports what
		// the sanitizers saw before: often the cause, as with a skipped
		// mbarrier wait that ends in a deadlock.
		if rep := l.san.report(); rep != nil {
			if l.err == nil {
				return rep
			}
			return errors.Join(l.err, rep)
		}
	}
	return l.err
}

// fail records block i's error, keeping the lowest-numbered one.
func (l *launch) fail(i int64, err error) {
	l.errMu.Lock()
	defer l.errMu.Unlock()
	if l.err == nil || i < l.errAt {
		l.err, l.errAt = err, i
	}
	for {
		cur := l.failAt.Load()
		if i >= cur || l.failAt.CompareAndSwap(cur, i) {
			return
		}
	}
}

func paramList(ps []Param) string {
	if len(ps) == 0 {
		return "no parameters"
	}
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s .%s at %d", p.Name, p.Type, p.Offset)
	}
	return s
}
