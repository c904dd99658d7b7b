package gpu

// GridSync in native mode: a block barrier, one arrival per block at the
// launch's grid barrier, and a block barrier again. RunNativeCooperative
// runs every block at once (one worker each), as a GPU keeps a
// cooperative launch's blocks resident, so the blocks that wait do not
// hold up the ones they wait for.

import (
	"fmt"
	"runtime"
	"sync"
)

// gridBarrier is one cooperative launch's grid-wide meeting point.
type gridBarrier struct {
	mu       sync.Mutex
	cond     sync.Cond
	gen      uint64 // completed rounds
	arrived  int    // blocks at the current round
	finished int    // blocks that returned from the kernel
	at       string // where the first block of the round called GridSync
}

func (g *gridBarrier) init() { g.cond.L = &g.mu }

// wake makes every waiting block re-check the launch (it failed).
func (g *gridBarrier) wake() {
	g.mu.Lock()
	g.cond.Broadcast()
	g.mu.Unlock()
}

// blockDone counts a block that returned from the kernel: the blocks
// waiting for it may now be waiting for one that never arrives.
func (g *gridBarrier) blockDone() {
	g.mu.Lock()
	g.finished++
	g.cond.Broadcast()
	g.mu.Unlock()
}

func (th *thread) gridSync() {
	b := th.blk
	if !b.l.coop {
		_, file, line, _ := runtime.Caller(2)
		b.abort(&BarrierError{Block: b.ctaid, Kind: "grid sync outside a cooperative launch",
			Detail: fmt.Sprintf("GridSync (%s) needs every block running at once: launch the kernel through kern, or with RunNativeCooperative", (&site{file: file, line: line}).String())})
		panic(abortUnwind{})
	}
	th.syncBlock()
	if th.linear == 0 {
		th.gridArrive()
	}
	th.syncBlock()
}

// gridArrive is the block's arrival, made by its thread 0 while the
// others wait at the block barrier after it.
func (th *thread) gridArrive() {
	b, l := th.blk, th.blk.l
	g := &l.gbar
	g.mu.Lock()
	if g.arrived == 0 {
		_, file, line, _ := runtime.Caller(3)
		g.at = (&site{file: file, line: line}).String()
	}
	gen := g.gen
	g.arrived++
	if g.arrived == l.nblocks {
		g.arrived = 0
		g.gen++
		g.cond.Broadcast()
		g.mu.Unlock()
		return
	}
	for g.gen == gen {
		if l.failed.Load() {
			g.mu.Unlock()
			b.abort(nil)
			panic(abortUnwind{})
		}
		if g.finished > 0 && g.arrived+g.finished == l.nblocks {
			err := &BarrierError{Block: b.ctaid, Kind: "grid barrier divergence",
				Detail: fmt.Sprintf("%d blocks at GridSync (%s), %d returned", g.arrived, g.at, g.finished)}
			g.mu.Unlock()
			b.abort(err)
			panic(abortUnwind{})
		}
		g.cond.Wait()
	}
	g.mu.Unlock()
}
