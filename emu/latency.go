package emu

import (
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Latency is an Observer that times a kernel as a GPU would, roughly: each
// warp issues one instruction a cycle once the registers it reads are
// ready, an instruction's results are ready a fixed latency later (global
// loads: DRAM the first time a launch touches a 32-byte sector, L2 after),
// a block barrier releases its warps when the last arrives, and a word
// stored in the launch cannot be read before the store reached L2. The
// kernel then takes the longer of its slowest block (blocks placed on
// SMs × slots in index order) and its DRAM bytes at the copy rate.
//
// What it is for: a decode kernel that moves a few megabytes is bound by
// chains of dependent round trips to memory, not by bandwidth, and a GPU
// is not always at hand. The model counts those chains (Timing.Trips) and
// prices them; it knows nothing of caches beyond first touch, of DRAM
// queueing, of issue contention between warps or of instruction caches,
// so its times are for comparing designs, not predictions to quote.
// Prefetches to L2 start their lines' trips at their issue. Poll loops
// (a nanosleep and the branch back to it, as gpu.GridSync spins) cost
// nothing while they poll: the warp leaves the loop at the
// time the word it saw change was stored, plus an L2 round trip.
type Latency struct {
	Config LatencyConfig

	mu      sync.Mutex
	kernels map[string]*Timing
	order   []string
	cur     *latLaunch
}

// LatencyConfig is the machine the model prices. Cycles are SM cycles.
type LatencyConfig struct {
	ClockGHz      float64
	SMs           int
	DRAMBandwidth float64 // bytes/s a kernel can stream (a device copy's rate)
	DRAM, L2      int     // global load latency, first touch and after
	Shared        int
	ALU, SFU, MMA int
	Shuffle       int
	Atomic        int // a global atomic's round trip
	Fence         int
	Barrier       int // from the last arrival to the release
	// Slots, if set, is how many blocks of the kernel fit on an SM;
	// otherwise 2048 threads' worth, at most 32.
	Slots func(kernel string, block [3]int) int
}

// H100 is an H100 SXM at its boost clock. Latencies are typical
// microbenchmark figures (DRAM about 400 ns, L2 about 130 ns); the
// bandwidth is what a 1 GiB device copy reached on the H100 of
// docs/performance-gpu.md (2.92–2.96 TB/s), not the 3.35 TB/s peak.
var H100 = LatencyConfig{
	ClockGHz: 1.98, SMs: 132, DRAMBandwidth: 2.94e12,
	DRAM: 800, L2: 260, Shared: 30, ALU: 5, SFU: 20, MMA: 33, Shuffle: 25,
	Atomic: 520, Fence: 300, Barrier: 20,
}

// Timing is what the model found for a kernel, over its last launch.
type Timing struct {
	Kernel   string
	Launches int
	Blocks   int
	// Cycles is the slowest block's span once blocks are placed on SMs
	// (the latency bound), BWCycles the DRAM bytes at the copy rate.
	Cycles, BWCycles int64
	// Trips is the most global round trips (loads, atomics, waits for a
	// cp.async group) any warp's critical chain holds.
	Trips     int
	DRAMBytes int64
	// Micros is max(Cycles, BWCycles) in µs at the configured clock.
	Micros float64
	// Chain is the round trips of the warp that ends last, first to last:
	// where each was issued (Go file:line from .loc, else the PTX line)
	// and, after an @, the cycle its value arrived.
	Chain []string
}

// NewLatency returns a model of the machine c.
func NewLatency(c LatencyConfig) *Latency {
	return &Latency{Config: c, kernels: map[string]*Timing{}}
}

type warpKey struct {
	block [3]int
	warp  int
}

// latWarp is one warp's state. Its instructions issue in data-flow
// order within a basic block, as ptxas schedules one (loads early, moves
// of a result coalesced away): an instruction waits for its sources, for
// the readers and the last writer of the registers it writes, and for
// ctrl, the last branch, barrier or wait it cannot pass. A branch issues
// after every instruction before it has.
type latWarp struct {
	ctrl     latTime
	ready    map[int32]latTime // by register slot
	lastRead map[int32]int64
	count    int64   // instructions issued: one a cycle at best
	last     latTime // the latest issue, with its chain
	// The last step's destination registers, which an Access for the
	// same instruction retimes (a load's latency depends on its space).
	pending  []int32
	issued   latTime
	pendPC   int
	barriers int            // block barriers passed
	atBar    bool           // waiting at barrier number barriers-1
	spinning bool           // inside a poll loop
	wake     latTime        // when a poll saw the newest store it read
	atomIdx  map[uint64]int // by word: the index of this warp's last atomic in atoms
	// cp.async groups: the open group's completion, then committed ones.
	open   latTime
	groups []latTime
	end    latTime
}

// latTime is a value's ready time, the round trips on the chain that
// sets it, and the last of them (a list back to the first).
type latTime struct {
	at    int64
	trips int
	node  *chainNode
}

// chainNode is one round trip on a chain: where it was issued.
type chainNode struct {
	file string
	line int   // Go line, or the PTX line when file is ""
	at   int64 // the cycle its value arrived
	prev *chainNode
}

// plus is t later by c cycles, on the same chain.
func (t latTime) plus(c int64) latTime { t.at += c; return t }

// site is where an access was issued: its Go position, or its PTX line.
func site(a *Access) (string, int) {
	if a.File != "" {
		return a.File, a.GoLine
	}
	return "", a.Line
}

// tripAt is trip at access a's site.
func (t latTime) tripAt(c int64, a *Access) latTime {
	f, l := site(a)
	return t.trip(c, f, l)
}

// trip is a round trip issued at t, ready c cycles later, at site.
func (t latTime) trip(c int64, file string, line int) latTime {
	return latTime{t.at + c, t.trips + 1, &chainNode{file, line, t.at + c, t.node}}
}

type latBlock struct {
	arrive map[int]latTime // by barrier number: the last arrival
	bulk   latTime         // the latest bulk copy's completion
}

// latLaunch is one launch's state.
type latLaunch struct {
	t       *Timing
	block   [3]int
	warps   map[warpKey]*latWarp
	blocks  map[[3]int]*latBlock
	sectors map[uint64]int64   // global sectors touched: when each is (or will be) in L2
	stamps  map[uint64]latTime // global words stored: when they reached L2
	// atoms is each word's atomics in the emulator's order, when each
	// reached L2; nblocks the launch's block count. A grid barrier's
	// count (compiler/lower_grid.go) gets one atomic a block a round,
	// and a round's arrivals all come before the next round's.
	atoms   map[uint64][]latTime
	nblocks int
}

// Launch implements LaunchObserver.
func (m *Latency) Launch(kernel string, grid, block [3]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finish()
	t := m.kernels[kernel]
	if t == nil {
		t = &Timing{Kernel: kernel}
		m.kernels[kernel] = t
		m.order = append(m.order, kernel)
	}
	t.Launches++
	t.DRAMBytes = 0
	m.cur = &latLaunch{t: t, block: block, warps: map[warpKey]*latWarp{}, blocks: map[[3]int]*latBlock{},
		sectors: map[uint64]int64{}, stamps: map[uint64]latTime{}, atoms: map[uint64][]latTime{},
		nblocks: max(1, grid[0]) * max(1, grid[1]) * max(1, grid[2])}
}

func (l *latLaunch) warp(b [3]int, w int) *latWarp {
	k := warpKey{b, w}
	s := l.warps[k]
	if s == nil {
		s = &latWarp{ready: map[int32]latTime{}, lastRead: map[int32]int64{}, atomIdx: map[uint64]int{}}
		l.warps[k] = s
	}
	return s
}

func (l *latLaunch) blk(b [3]int) *latBlock {
	s := l.blocks[b]
	if s == nil {
		s = &latBlock{arrive: map[int]latTime{}}
		l.blocks[b] = s
	}
	return s
}

// Step implements Observer.
func (m *Latency) Step(st *Step) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.cur
	if l == nil {
		return
	}
	w := l.warp(st.Block, st.Warp)
	b := l.blk(st.Block)
	c := &m.Config
	if w.atBar {
		// The emulator resumes a warp only once the whole block arrived.
		a := b.arrive[w.barriers-1]
		w.ctrl = maxTime(w.ctrl, a.plus(int64(c.Barrier)))
		w.atBar = false
	}
	if st.Spin {
		w.spinning = true
		w.pending = nil
		return
	}
	if w.spinning {
		w.spinning = false
		w.ctrl = maxTime(w.ctrl, w.wake)
		w.wake = latTime{}
	}
	if st.Copy {
		// A copy ptxas coalesces away: its destination is its source,
		// ready when that is, and the warp does not wait for it here.
		var src latTime
		for _, r := range st.Reads {
			src = maxTime(src, w.ready[r])
		}
		for _, r := range st.Writes {
			w.ready[r] = src
		}
		w.pending = nil
		return
	}
	issue := w.ctrl
	for _, r := range st.Reads {
		issue = maxTime(issue, w.ready[r])
	}
	for _, r := range st.Writes {
		issue.at = max(issue.at, w.lastRead[r], w.ready[r].at)
	}
	if st.Ordered {
		// ptxas schedules within a basic block (and across the short
		// ifs it predicates); across a branch it keeps, the warp issues
		// in order: the branch waits for every instruction before it to
		// issue, not to finish.
		issue = maxTime(issue, w.last)
	}
	w.count++
	issue.at = max(issue.at, 1)
	for _, r := range st.Reads {
		w.lastRead[r] = max(w.lastRead[r], issue.at)
	}
	w.last = maxTime(w.last, issue)
	done := issue.plus(int64(c.ALU))
	switch st.Class {
	case ClassSFU:
		done.at = issue.at + int64(c.SFU)
	case ClassMMA:
		done.at = issue.at + int64(c.MMA)
	case ClassShuffle:
		done.at = issue.at + int64(c.Shuffle)
	case ClassMem:
		// Shared until an Access says otherwise.
		done.at = issue.at + int64(c.Shared)
		if st.Bulk {
			b.bulk = maxTime(b.bulk, issue.trip(int64(c.DRAM), "", st.Line))
		}
	case ClassControl:
		if st.Ordered {
			w.ctrl = maxTime(w.ctrl, issue)
		}
	case ClassFence:
		w.ctrl = maxTime(w.ctrl, maxTime(issue, w.last).plus(int64(c.Fence)))
	case ClassBarrier:
		n := w.barriers
		w.barriers++
		w.atBar = true
		b.arrive[n] = maxTime(b.arrive[n], maxTime(issue, w.last))
	case ClassAsyncCommit:
		w.groups = append(w.groups, w.open)
		w.open = latTime{}
	case ClassAsyncWait:
		// wait_all and wait_group 0; kern's kernels wait for all but the
		// newest groups rarely enough that the model waits for all.
		for _, g := range w.groups {
			w.ctrl = maxTime(w.ctrl, g)
		}
		w.groups = w.groups[:0]
		w.ctrl = maxTime(maxTime(w.ctrl, w.open), b.bulk)
		w.open = latTime{}
	case ClassWait:
		done = maxTime(done, b.bulk)
	}
	for _, r := range st.Writes {
		w.ready[r] = done
	}
	w.pending, w.issued, w.pendPC = st.Writes, issue, st.PC
	w.end = maxTime(w.end, done)
}

// maxTime is the later of a and b, with its chain (the one with more
// round trips when they tie).
func maxTime(a, b latTime) latTime {
	if b.at > a.at || b.at == a.at && b.trips > a.trips {
		return b
	}
	return a
}

// Access implements Observer: it retimes the last step's results by the
// space the access fell in.
func (m *Latency) Access(a *Access) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.cur
	if l == nil || a.Space != Global {
		return
	}
	w := l.warp(a.Block, a.Warp)
	c := &m.Config
	issue := w.issueOf(a)
	// A sector first touched now comes from DRAM; one already in L2, or
	// on its way there (a prefetch), an L2 round trip after it arrives.
	lat, stamp := int64(c.L2), latTime{}
	for mm := a.Mask; mm != 0; mm &= mm - 1 {
		addr := a.Addr[bits.TrailingZeros32(mm)]
		for s := addr &^ 31; s < addr+uint64(a.Size); s += 32 {
			lat = max(lat, l.inL2(s, issue.at, c)+int64(c.L2)-issue.at)
		}
		if a.Kind != AccessLoad {
			continue
		}
		stamp = maxTime(stamp, l.stamps[addr&^3])
	}
	done := issue.tripAt(lat, a)
	if stamp.at > 0 {
		done = maxTime(done, stamp.tripAt(int64(c.L2), a))
	}
	switch a.Kind {
	case AccessLoad:
		if w.spinning {
			// A poll of a word this warp arrived on with an atomic (a
			// grid barrier's count) waits for the round's last arrival;
			// one of a stored word (a flag) for the store it sees. The
			// latest stamp may be a later round's: the emulator's order
			// of polls is not the GPU's.
			addr := a.Addr[bits.TrailingZeros32(a.Mask)] &^ 3
			if i, ok := w.atomIdx[addr]; ok {
				if end := (i/l.nblocks+1)*l.nblocks - 1; end < len(l.atoms[addr]) {
					stamp = l.atoms[addr][end]
				}
			}
			if stamp.at > 0 {
				w.wake = maxTime(w.wake, stamp.tripAt(int64(c.L2), a))
			}
			return
		}
		if strings.HasPrefix(a.Instr, "cp.") {
			w.open = maxTime(w.open, done)
			return
		}
		for _, r := range w.pending {
			w.ready[r] = done
		}
	case AccessStore, AccessAtomic:
		reach := issue.plus(int64(c.L2))
		if a.Kind == AccessAtomic {
			// Atomics on one word serialize at L2 a few cycles apart,
			// not a round trip apart: the value returned waits for no
			// earlier arrival (the emulator's order of them is not the
			// GPU's either).
			done = maxTime(done, issue.tripAt(int64(c.Atomic), a))
			reach = issue.plus(int64(c.Atomic) / 2)
			for _, r := range w.pending {
				w.ready[r] = done
			}
			if a.Mask&(a.Mask-1) == 0 { // one lane: a counter's arrival
				addr := a.Addr[bits.TrailingZeros32(a.Mask)] &^ 3
				w.atomIdx[addr] = len(l.atoms[addr])
				l.atoms[addr] = append(l.atoms[addr], reach)
			}
		}
		for mm := a.Mask; mm != 0; mm &= mm - 1 {
			addr := a.Addr[bits.TrailingZeros32(mm)]
			for x := addr &^ 3; x < addr+uint64(a.Size); x += 4 {
				l.stamps[x] = maxTime(l.stamps[x], reach)
			}
		}
		w.end = maxTime(w.end, reach)
	}
	for _, r := range w.pending {
		w.end = maxTime(w.end, w.ready[r])
	}
}

// Prefetch implements PrefetchObserver: the lines it names start for
// L2 at the prefetch's issue.
func (m *Latency) Prefetch(a *Access) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.cur
	if l == nil {
		return
	}
	issue := l.warp(a.Block, a.Warp).issueOf(a).at
	for mm := a.Mask; mm != 0; mm &= mm - 1 {
		addr := a.Addr[bits.TrailingZeros32(mm)]
		for s := addr &^ 127; s < addr+uint64(a.Size); s += 32 {
			l.inL2(s, issue, &m.Config)
		}
	}
}

// issueOf is when the warp issued the instruction of access a: the last
// step's, or the warp's ctrl when that step was not recorded (a poll
// loop's).
func (w *latWarp) issueOf(a *Access) latTime {
	if w.pendPC != a.PC {
		return w.ctrl
	}
	return w.issued
}

// inL2 is when global sector s is in L2 for a request issued at cycle
// at: if the launch has not touched it, or its first recorded touch was
// issued later in the model's time than at, this request is the one that
// fetches it from DRAM. Blocks run on goroutines, so the emulator's order
// of touches is not the model's; taking the earliest fetch bounds what a
// block pays for another's late touch by the fetch itself, and a request
// never waits longer than its own DRAM trip.
func (l *latLaunch) inL2(s uint64, at int64, c *LatencyConfig) int64 {
	own := at + int64(c.DRAM-c.L2)
	in, ok := l.sectors[s]
	if !ok {
		l.t.DRAMBytes += 32
	}
	if !ok || own < in {
		in = own
		l.sectors[s] = in
	}
	return in
}

// finish closes the current launch: blocks placed on the SMs' slots in
// index order, each as long as its slowest warp.
func (m *Latency) finish() {
	l := m.cur
	if l == nil {
		return
	}
	m.cur = nil
	t := l.t
	ends := map[[3]int]int64{}
	trips := 0
	var last latTime // the latest-ending warp's chain
	for k, w := range l.warps {
		ends[k.block] = max(ends[k.block], w.end.at, w.count)
		trips = max(trips, w.end.trips)
		last = maxTime(last, w.end)
	}
	t.Chain = nil
	for n := last.node; n != nil; n = n.prev {
		site := "PTX line " + itoa(n.line)
		if n.file != "" {
			site = n.file + ":" + itoa(n.line)
		}
		t.Chain = append(t.Chain, site+"@"+itoa(int(n.at)))
	}
	slices.Reverse(t.Chain)
	idx := make([][3]int, 0, len(ends))
	for b := range ends {
		idx = append(idx, b)
	}
	sort.Slice(idx, func(i, j int) bool {
		a, b := idx[i], idx[j]
		if a[2] != b[2] {
			return a[2] < b[2]
		}
		if a[1] != b[1] {
			return a[1] < b[1]
		}
		return a[0] < b[0]
	})
	slots := m.slots(t.Kernel, l.block)
	free := make([]int64, slots) // each slot's next free cycle
	var span int64
	for _, b := range idx {
		s := 0
		for i := range free {
			if free[i] < free[s] {
				s = i
			}
		}
		free[s] += ends[b]
		span = max(span, free[s])
	}
	t.Blocks, t.Cycles, t.Trips = len(idx), span, trips
	t.BWCycles = int64(math.Ceil(float64(t.DRAMBytes) / m.Config.DRAMBandwidth * m.Config.ClockGHz * 1e9))
	t.Micros = float64(max(t.Cycles, t.BWCycles)) / (m.Config.ClockGHz * 1e3)
}

func (m *Latency) slots(kernel string, block [3]int) int {
	n := 0
	if m.Config.Slots != nil {
		n = m.Config.Slots(kernel, block)
	}
	if n <= 0 {
		threads := max(1, block[0]*max(block[1], 1)*max(block[2], 1))
		n = min(32, max(1, 2048/threads))
	}
	return max(1, n*m.Config.SMs)
}

// Reset forgets every kernel seen so far.
func (m *Latency) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur, m.kernels, m.order = nil, map[string]*Timing{}, nil
}

// Timings returns each kernel's figures, in the order first launched,
// closing the launch in progress.
func (m *Latency) Timings() []Timing {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finish()
	out := make([]Timing, 0, len(m.order))
	for _, k := range m.order {
		out = append(out, *m.kernels[k])
	}
	return out
}
