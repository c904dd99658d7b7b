package gpu

// The rendezvous every collective operation of native mode is built on, and
// the rules that turn a barrier that can never complete into an error.
//
// A rendezvous is a reusable meeting point for a fixed group of threads: the
// whole block (Sync, block reductions) or one warp (SyncWarp, shuffles,
// votes, MMA, LdMatrix). Each participant deposits its inputs in a slot of
// its own, then arrives. Every arrival but the last parks; the last one
// computes all participants' results, then releases the round, which wakes
// the others to read their results. A generation counter tells a woken
// thread that its round is over, so one rendezvous serves any number of
// rounds (collectives in loops) without allocating.
//
// Slots are safe to reuse without a second barrier: a participant writes
// its inputs for round g+1 only after it has read its result of round g, and
// the results of round g+1 are written only once everyone has arrived at it.
//
// # Rules (documented choices)
//
//   - All participants must arrive with the same operation, and at a block
//     barrier from the same call site. Threads meeting at different Sync
//     calls are reported as a "barrier mismatch" (a GPU's bar.sync 0 would
//     let them pass each other, which is never what the kernel means);
//     lanes meeting in different warp collectives (a shuffle and a Ballot)
//     as a "warp collective mismatch". Warp collectives are not told apart
//     by call site, which would cost a stack unwind per call.
//   - A thread that returns (finishes the kernel) never arrives. On a GPU
//     exited threads stop counting towards bar.sync; here they do not, so
//     threads left waiting by returned ones are an error, "barrier
//     divergence: N threads at Sync (k.go:12), M returned". The compiler
//     rejects a Sync it cannot prove uniform for the same reason.
//   - Any other state in which every live thread of a block is parked is a
//     "deadlock", reported with every waiting site.
//
// Stuck states are found without timeouts: the block counts running
// threads (neither parked nor finished). A thread decrements the count when
// it parks or finishes; the last arriver of a round adds the parked
// participants back before waking them. A thread that takes the count to
// zero while some thread is parked knows that no rendezvous can ever
// complete again, and fails the block.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// collKind is the operation a thread waits in, for reports.
type collKind uint8

const (
	kindSync collKind = iota
	kindBlockReduce
	kindSyncWarp
	kindShfl
	kindBallot
	kindMMAF16
	kindMMABF16
	kindMMAS8
	kindLdMatrix
	kindWGMMA
)

var kindNames = [...]string{
	kindSync:        "Sync",
	kindBlockReduce: "BlockSum/BlockMax/BlockMin",
	kindSyncWarp:    "SyncWarp",
	kindShfl:        "Shfl",
	kindBallot:      "Ballot/Any/All",
	kindMMAF16:      "MMAF16",
	kindMMABF16:     "MMABF16",
	kindMMAS8:       "MMAS8",
	kindLdMatrix:    "LdMatrix",
	kindWGMMA:       "WGMMA...RegA",
}

func (k collKind) String() string { return kindNames[k] }

// waitInfo is what a thread arrived at a rendezvous with: the operation,
// its variant (LdMatrix's count and transposition), and for block barriers
// the program counter of the kernel's call (see native_site.go).
type waitInfo struct {
	kind collKind
	arg  uint8
	pc   uintptr
}

type rendezvous struct {
	warp int // the warp's index, or -1 for the block barrier
	size int // participants per round

	gen atomic.Uint32 // rounds completed

	mu       sync.Mutex
	arrived  int
	first    waitInfo  // what the first arrival of the round called
	mismatch bool      // some arrival called something else
	waiting  []*thread // parked participants of this round
}

func (r *rendezvous) init(warp, size int) {
	r.warp, r.size = warp, size
	r.waiting = make([]*thread, 0, size)
}

// reset forgets an unfinished round, left behind by a failed block.
func (r *rendezvous) reset() {
	r.mu.Lock()
	r.arrived, r.mismatch = 0, false
	clear(r.waiting)
	r.waiting = r.waiting[:0]
	r.mu.Unlock()
}

// arrive adds th to the current round. The last participant to arrive gets
// true back: it must compute every participant's results and then call
// release. The others park until then and get false. A thread of a failed
// block unwinds from here instead.
func (r *rendezvous) arrive(th *thread, at waitInfo) bool {
	b := th.blk
	if b.aborted.Load() {
		panic(abortUnwind{})
	}
	if b.l.failed.Load() { // another block failed: stop this one too
		b.abort(nil)
		panic(abortUnwind{})
	}
	r.mu.Lock()
	th.wait = at
	if r.arrived == 0 {
		r.first, r.mismatch = at, false
	} else if at != r.first {
		r.mismatch = true
	}
	r.arrived++
	if r.arrived == r.size {
		var err error
		if r.mismatch {
			err = r.mismatchError(b, th)
		}
		r.mu.Unlock()
		if err != nil {
			b.abort(err)
			panic(abortUnwind{})
		}
		return true
	}
	gen := r.gen.Load()
	r.waiting = append(r.waiting, th)
	stuck := b.running.Add(-1) == 0
	r.mu.Unlock()
	if stuck {
		b.stuck()
	}
	for {
		<-th.wake
		if r.gen.Load() != gen {
			return false
		}
		if b.aborted.Load() {
			b.running.Add(1) // running again, to unwind
			panic(abortUnwind{})
		}
	}
}

// release ends the current round and wakes its parked participants.
func (r *rendezvous) release(b *block) {
	r.mu.Lock()
	b.running.Add(int32(len(r.waiting)))
	r.arrived = 0
	r.gen.Add(1)
	for _, w := range r.waiting {
		w.notify()
	}
	clear(r.waiting)
	r.waiting = r.waiting[:0]
	r.mu.Unlock()
}

// mismatchError describes a complete round whose participants called
// different operations or sites; last is the final arrival. r.mu is held.
func (r *rendezvous) mismatchError(b *block, last *thread) error {
	var g waitGroups
	g.addAll(append(r.waiting[:len(r.waiting):len(r.waiting)], last))
	e := &BarrierError{Block: b.ctaid, Kind: "barrier mismatch", Detail: g.String()}
	if r.warp >= 0 {
		e.Kind = "warp collective mismatch"
		e.Detail = fmt.Sprintf("warp %d: %s", r.warp, e.Detail)
	}
	return e
}

// stuck fails a block in which every thread is parked or finished and at
// least one is parked. Once the block has failed, the count of running
// threads no longer means anything (unwinding threads come and go) and
// stuck does nothing.
func (b *block) stuck() {
	if b.aborted.Load() {
		return
	}
	if b.l.failed.Load() { // no need to explain: the launch has its error
		b.abort(nil)
		return
	}
	var waiting []*thread
	blockOnly := true
	for _, r := range b.rendezvous() {
		r.mu.Lock()
		waiting = append(waiting, r.waiting...)
		if r.warp >= 0 && len(r.waiting) > 0 {
			blockOnly = false
		}
		r.mu.Unlock()
	}
	var g waitGroups
	g.addAll(waiting)
	returned := b.exited.Load()
	kind := "deadlock"
	if blockOnly && returned > 0 {
		kind = "barrier divergence"
	}
	detail := fmt.Sprintf("%v, %d returned", &g, returned)
	b.abort(&BarrierError{Block: b.ctaid, Kind: kind, Detail: detail})
}

// rendezvous lists the block barrier and every warp's rendezvous.
func (b *block) rendezvous() []*rendezvous {
	rs := make([]*rendezvous, 0, 1+len(b.warps))
	rs = append(rs, &b.bar)
	for w := range b.warps {
		rs = append(rs, &b.warps[w].rv)
	}
	return rs
}

// waitGroups counts waiting threads by operation and position.
type waitGroups struct {
	at []waitAt
	n  []int
}

// waitAt is an operation and either the site of its call or, for warp
// collectives, the position read from a stack dump.
type waitAt struct {
	kind collKind
	site *site
	pos  string
}

func (w waitAt) String() string {
	if w.site != nil {
		return fmt.Sprintf("%v (%v)", w.kind, w.site)
	}
	return fmt.Sprintf("%v (%s)", w.kind, w.pos)
}

// addAll adds the threads, which must stay parked while it runs.
func (g *waitGroups) addAll(threads []*thread) {
	var dump map[int64]string
	for _, th := range threads {
		at := waitAt{kind: th.wait.kind}
		if th.wait.pc != 0 {
			at.site = siteOf(th.wait.pc)
		} else {
			if dump == nil {
				dump = kernelPositions()
			}
			if at.pos = dump[th.goid]; at.pos == "" {
				at.pos = "unknown position"
			}
		}
		g.add(at)
	}
}

func (g *waitGroups) add(at waitAt) {
	if i := slices.Index(g.at, at); i >= 0 {
		g.n[i]++
		return
	}
	g.at = append(g.at, at)
	g.n = append(g.n, 1)
}

// String lists the groups in a fixed order, "32 threads at Sync (k.go:12),
// 32 threads at Sync (k.go:15)".
func (g *waitGroups) String() string {
	parts := make([]string, len(g.at))
	for i, at := range g.at {
		parts[i] = fmt.Sprintf("%d threads at %v", g.n[i], at)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
