package emu

// pdlcheck (Options.PDLcheck): the kernel's side of programmatic
// dependent launch. On a GPU a kernel launched with PDL may start while
// the launches before it on the stream still run, and waits for them at
// griddepcontrol.wait (gpu.WaitPriorGrids). Before that, a thread must
// write no global memory (a kernel before it may still read it) and read
// none that those kernels write. The emulator runs launches one after
// another, so such a kernel computes the right answer here and a wrong
// one on an H100, now and then; pdlcheck makes the race visible here.
//
// Which launches a PDL kernel may overlap: its predecessor, and that
// one's predecessor while the predecessor itself is still waiting, back
// to the last launch without PDL, which starts only after everything
// before it completes (its own blocks may still be draining when the PDL
// kernel after it starts). The window is the bytes those launches wrote,
// tracked per 32-byte sector with the kernel that wrote each.

import (
	"fmt"
	"sync"
)

// pdlWindow is, per device, the sectors the launches in the window wrote.
type pdlWindow struct {
	mu      sync.Mutex
	written map[uint64]string // sector → the kernel that last wrote it
}

// pdlLaunch is one launch's pdlcheck state.
type pdlLaunch struct {
	pdl    bool              // launched with PDL: check its threads
	prior  map[uint64]string // the window when it started (read only)
	mu     sync.Mutex
	writes map[uint64]struct{} // sectors it writes
}

func (p *pdlWindow) begin(pdl bool) *pdlLaunch {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &pdlLaunch{pdl: pdl, prior: p.written, writes: map[uint64]struct{}{}}
}

// end moves the window past launch l of kernel name: without PDL it is
// the window's new start; with it, it joins the window.
func (p *pdlWindow) end(l *pdlLaunch, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := map[uint64]string{}
	if l.pdl {
		for s, k := range p.written {
			next[s] = k
		}
	}
	for s := range l.writes {
		next[s] = name
	}
	p.written = next
}

// pdlAccess checks and records lane l's global access of n bytes at a.
func (w *warp) pdlAccess(l int, a uint64, n int, kind AccessKind) {
	p := w.san.pdl
	first, last := a>>5, (a+uint64(n)-1)>>5
	if kind != AccessLoad {
		p.mu.Lock()
		for s := first; s <= last; s++ {
			p.writes[s] = struct{}{}
		}
		p.mu.Unlock()
	}
	if !p.pdl || w.waited&(1<<l) != 0 {
		return
	}
	if kind != AccessLoad {
		w.san.record(w, l, "pdlcheck", fmt.Sprintf("global %s of %d bytes before griddepcontrol.wait", kind, n), a,
			"a kernel launched with programmatic dependent launch may write only after gpu.WaitPriorGrids: the kernels before it may still read this memory")
		return
	}
	for s := first; s <= last; s++ {
		if k, ok := p.prior[s]; ok {
			w.san.record(w, l, "pdlcheck", fmt.Sprintf("global read of %d bytes before griddepcontrol.wait", n), a,
				fmt.Sprintf("%s wrote them and may still be running on a GPU: read them after gpu.WaitPriorGrids (for ops.Matmul's weights, StaticWeights says no running kernel writes them)", k))
			return
		}
	}
}
