package emu

// Cooperative launches (LaunchConfig.Cooperative): every block runs at
// once on a goroutine of its own, so blocks may wait for each other, as
// gpu.GridSync's grid barrier does (compiler/lower_grid.go): thread 0 of
// each waiting block polls a global word with nanosleep between polls
// while its other warps wait at a block barrier.
//
// Such a wait ends only when some block writes global memory. A block
// that has only polled for gridIdleRounds scheduler rounds in a row, with
// no global store or atomic anywhere in the launch meanwhile, marks itself
// stuck at the launch's current write count. When every block still
// running is stuck at the current count, none can ever write again, so
// none of their waits can end: the launch is reported as a grid barrier
// deadlock (typically a block that returned before a GridSync the others
// wait at) instead of running until its context or step limit ends it.
// The mark names the write count it was made at, so a block the Go
// scheduler has not run since other blocks wrote is not counted (its next
// poll may succeed); a block that computes without writing is not polling
// and is never marked.

import (
	"fmt"
	"sync/atomic"
)

// gridIdleRounds is how many rounds of polling with no write anywhere make
// a block stuck.
const gridIdleRounds = 2000

// coopState is a cooperative launch's shared bookkeeping.
type coopState struct {
	writes     atomic.Uint64 // global stores and atomics so far
	unfinished atomic.Int32  // blocks not yet returned
	// stuckAt is, per block (linear index), 1 + the write count at which
	// it marked itself stuck, 0 while it is not; returned marks the blocks
	// that have returned.
	stuckAt  []atomic.Uint64
	returned []atomic.Bool
}

func (c *coopState) init(nblocks int) {
	c.unfinished.Store(int32(nblocks))
	c.stuckAt = make([]atomic.Uint64, nblocks)
	c.returned = make([]atomic.Bool, nblocks)
}

// coopBlock is one block's part of it.
type coopBlock struct {
	seen uint64 // writes at the last round
	idle int
}

// gridActive records a round in which the block did more than poll.
func (b *block) gridActive() {
	b.coop.idle = 0
	b.l.stuckAt[b.lin].Store(0)
}

// deadlocked reports whether every block still running is stuck at write
// count w.
func (l *launch) deadlocked(w uint64) bool {
	for i := range l.returned {
		if !l.returned[i].Load() && l.stuckAt[i].Load() != w+1 {
			return false
		}
	}
	return l.writes.Load() == w
}

// gridPolled records a round in which the block only polled, and reports
// a deadlock when every block still running is stuck.
func (b *block) gridPolled() error {
	l := b.l
	if w := l.writes.Load(); w != b.coop.seen {
		b.coop.seen = w
		b.gridActive()
		return nil
	}
	b.coop.idle++
	if b.coop.idle < gridIdleRounds {
		return nil
	}
	l.stuckAt[b.lin].Store(b.coop.seen + 1)
	if l.deadlocked(b.coop.seen) {
		n := l.grid[0] * l.grid[1] * l.grid[2]
		return b.stopped(fmt.Errorf("grid barrier deadlock: every block still running waits at a grid barrier (gpu.GridSync) that none of them can release; %d of %d blocks returned without reaching it", n-int(l.unfinished.Load()), n))
	}
	return nil
}

// gridLeave accounts for a block of a cooperative launch that has
// returned, however it ended.
func (b *block) gridLeave() {
	b.l.stuckAt[b.lin].Store(0)
	b.l.returned[b.lin].Store(true)
	b.l.unfinished.Add(-1)
}
