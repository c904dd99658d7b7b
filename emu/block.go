package emu

// A thread block: its warps, shared memory and barriers (PTX ISA §9.7.13.4
// bar/barrier).

import (
	"fmt"
	"math/bits"
	"strings"
)

// quantum is how many warp-instructions a warp runs before the block
// scheduler moves to the next warp. Warps also yield when all their lanes
// are blocked at a barrier, so most blocks switch warps only at barriers.
const quantum = 1 << 14

// block is one CTA. A worker goroutine reuses one block value for every
// block it runs.
type block struct {
	l      *launch
	idx    [3]int
	lin    int
	warps  []*warp
	shared []byte
	live   int // threads that have not exited
	bars   [16]barrier
	steps  uint64
	epoch  uint32 // barrier generation, for racecheck
	// mbarGen counts mbarrier updates; idle counts consecutive scheduler
	// rounds in which every warp only spun on an incomplete mbarrier phase.
	mbarGen uint64
	tma     []tmaCopy  // TMA loads issued in the current warp turn (exec_tma.go)
	stores  []tmaStore // TMA stores issued in the current warp turn (exec_tmastore.go)
	idle    int
	race    *raceShadow // nil unless racecheck is on
	coop    coopBlock   // cooperative launches only (cooperative.go)
}

// barrier counts the threads that arrived at one of the 16 named
// barriers; expected is the thread count of bar.sync a, b (0: every
// thread of the block that has not exited).
type barrier struct {
	arrived  int
	expected int
	// bar.red: the threads with a true predicate, and how many of the
	// arrivals were reductions.
	redTrue, redN int
}

func newBlock(l *launch) *block {
	b := &block{l: l, shared: make([]byte, l.shared)}
	// racecheck shadows shared memory; synccheck alone does too for
	// kernels with mbarriers, to report TMA tiles read without the wait
	// that orders them (race_mbarrier.go).
	if l.san != nil && (l.san.race || l.san.sync && usesMbarriers(l.k)) {
		b.race = newRaceShadow(l.shared)
		if usesMbarriers(l.k) {
			b.race.hb = newHB(l.nwarps, l.shared)
		}
	}
	per := l.k.nregs * 32
	regs := make([]uint64, per*l.nwarps)
	lsz := 32 * l.k.localSize
	local := make([]byte, lsz*l.nwarps)
	for i := 0; i < l.nwarps; i++ {
		w := &warp{b: b, l: l, k: l.k, code: l.k.code, id: i, obs: l.obs, san: l.san,
			regs:  regs[i*per : (i+1)*per : (i+1)*per],
			local: local[i*lsz : (i+1)*lsz : (i+1)*lsz],
		}
		n := min(32, l.nthr-i*32)
		w.valid = uint32(1<<n - 1)
		b.warps = append(b.warps, w)
	}
	return b
}

// run executes block lin to completion.
func (b *block) run(lin int) error {
	l := b.l
	b.lin = lin
	b.idx = [3]int{lin % l.grid[0], lin / l.grid[0] % l.grid[1], lin / (l.grid[0] * l.grid[1])}
	clear(b.shared)
	b.live = l.nthr
	b.bars = [16]barrier{}
	b.steps = 0
	b.epoch = 1
	b.tma = b.tma[:0]
	b.stores = b.stores[:0]
	if b.race != nil {
		b.race.reset()
	}
	for _, w := range b.warps {
		w.reset()
	}
	b.idle = 0
	if l.coop {
		b.coop = coopBlock{seen: l.writes.Load()}
		defer b.gridLeave()
	}
	for {
		progress, done, polled := false, true, false
		gen := b.mbarGen
		for _, w := range b.warps {
			if w.valid&^w.exited == 0 {
				continue
			}
			w.spin, w.sleep = false, false
			n, err := w.run(quantum)
			if err != nil {
				return err
			}
			if len(b.tma) > 0 {
				if err := b.landTMA(w); err != nil {
					return err
				}
			}
			if len(b.stores) > 0 {
				if err := b.flushTMAStores(w); err != nil {
					return w.fault(w.cur, err)
				}
			}
			if n > 0 && !w.spin && !w.sleep {
				progress = true
			}
			polled = polled || w.sleep
			if w.valid&^w.exited != 0 {
				done = false
			}
		}
		if done {
			l.dev.steps.Add(b.steps)
			return nil
		}
		// A round in which warps only spun on mbarrier phases is idle; the
		// second idle round in a row, with no mbarrier changed, proves no
		// warp can change anything (the first may have done work before
		// its wait that lets another warp run).
		switch {
		case progress || b.mbarGen != gen:
			b.idle = 0
			if l.coop {
				b.gridActive()
			}
		case polled:
			// A warp polls global memory (nanosleep): only another block
			// can end that, cooperative.go.
			if l.coop {
				if err := b.gridPolled(); err != nil {
					return err
				}
			}
		case b.idle < 1:
			b.idle++
		default:
			return b.deadlock()
		}
		if int64(lin) > l.failAt.Load() {
			return errAborted
		}
		if b.steps > l.maxStep {
			return b.stopped(fmt.Errorf("%w: block ran %d warp-instructions (Options.MaxSteps)", ErrStepLimit, b.steps))
		}
		if l.done != nil {
			select {
			case <-l.done:
				return b.stopped(fmt.Errorf("launch stopped after %d warp-instructions of this block: %w", b.steps, l.ctx.Err()))
			default:
			}
		}
	}
}

// stopped is the error of a block stopped while it still runs (the step
// limit, a cancelled launch): it names the instruction, and so the Go
// line, where the first unfinished warp is, which for a runaway kernel is
// inside the loop that does not end.
func (b *block) stopped(cause error) error {
	for _, w := range b.warps {
		run := w.runnable()
		if run == 0 {
			continue
		}
		pc := w.upc
		if !w.uniform {
			pc, run = w.minPC(run)
		}
		if pc < 0 || int(pc) >= len(w.code) {
			break
		}
		return w.fault(&w.code[pc], &laneError{lane: bits.TrailingZeros32(run), err: cause})
	}
	return &Error{Kernel: b.l.k.info.Name, Block: b.idx, Thread: [3]int{-1, -1, -1}, Err: cause}
}

// arrive counts n threads at barrier id; count > 0 is bar.sync's thread
// count operand.
func (b *block) arrive(id, n, count int) {
	bar := &b.bars[id]
	bar.arrived += n
	if count > 0 {
		bar.expected = count
	}
	b.check(id)
}

// check releases barrier id if enough threads arrived. Threads that
// exited are not waited for.
func (b *block) check(id int) {
	bar := &b.bars[id]
	if bar.arrived == 0 {
		return
	}
	want := bar.expected
	if want == 0 || want > b.live {
		want = b.live
	}
	if bar.arrived < want {
		return
	}
	res := *bar
	*bar = barrier{}
	b.epoch++
	if b.race != nil && b.race.hb != nil {
		b.race.hb.syncWarps(b.waitingAt(id))
	}
	for _, w := range b.warps {
		w.release(id, &res)
	}
}

// exited accounts for n threads exiting.
func (b *block) exited(n int) {
	b.live -= n
	for id := range b.bars {
		b.check(id)
	}
}

// deadlock describes a block in which no warp can make progress.
func (b *block) deadlock() error {
	l := b.l
	var parts []string
	var first *warp
	for _, w := range b.warps {
		live := w.valid &^ w.exited
		if live == 0 {
			continue
		}
		if first == nil {
			first = w
		}
		var ws []string
		for l := 0; l < 32; l++ {
			if live&(1<<l) == 0 {
				continue
			}
			pc := w.pc[l]
			what := "waiting"
			switch {
			case w.barBlk&(1<<l) != 0:
				what = fmt.Sprintf("at barrier %d (PTX line %d)", w.barID[l], w.code[max(pc-1, 0)].line)
			case w.syncBlk&(1<<l) != 0:
				what = fmt.Sprintf("at %s (PTX line %d) waiting for lanes of its member mask", w.code[pc].text, w.code[pc].line)
			}
			ws = append(ws, what)
		}
		parts = append(parts, fmt.Sprintf("warp %d: %d threads %s", w.id, bits.OnesCount32(live), summarize(ws)))
	}
	e := &Error{Kernel: l.k.info.Name, Block: b.idx, Thread: [3]int{-1, -1, -1},
		Err: fmt.Errorf("%w: %s; %d of %d threads have not exited", ErrDeadlock, strings.Join(parts, "; "), b.live, l.nthr)}
	return e
}

// summarize collapses identical states.
func summarize(ws []string) string {
	seen := map[string]int{}
	var order []string
	for _, w := range ws {
		if seen[w] == 0 {
			order = append(order, w)
		}
		seen[w]++
	}
	if len(order) == 1 {
		return order[0]
	}
	parts := make([]string, len(order))
	for i, o := range order {
		parts[i] = fmt.Sprintf("%d %s", seen[o], o)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
