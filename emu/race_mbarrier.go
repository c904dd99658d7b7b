package emu

// racecheck with mbarrier ordering. A kernel that hands shared memory
// between warps through mbarriers (PTX ISA §9.7.13.15) orders its
// accesses without bar.sync: an arrive (or complete_tx) releases what the
// arriving thread did before it, the completion of the phase gathers
// every arrival, and a try_wait/test_wait that observes the phase complete
// acquires all of it. A TMA copy (cp.async.bulk.tensor) writes shared
// memory as its own agent whose writes its complete_tx releases on the
// copy's mbarrier, and it is ordered after what the issuing thread had
// acquired when it issued the copy (the producer's wait on the "empty"
// barrier is what makes a refill safe). bar.sync orders everything
// before it for the warps it releases.
//
// emu tracks this with vector clocks (happens-before, as in FastTrack):
// agents are the block's warps and one TMA agent per mbarrier that
// copies complete on (lanes of a warp are one agent, as racecheck never
// compares lanes of a warp). Each agent counts its releases; each warp
// keeps the latest clock of every agent it has synchronised with; each
// shared byte remembers its last writer and clock, and per warp the
// clock of that warp's last read. An access conflicts when the other
// access's clock is newer than what the accessing agent has acquired of
// its agent: a read of a TMA tile the warp never waited for, a TMA refill
// of a stage a warp still reads, a store another warp has not released.
//
// Kernels without mbarrier instructions keep the plain barrier-epoch
// check (sanitize.go), whose results this does not change.

import (
	"fmt"
	"math/bits"
	"strings"
)

// hbTMAAgents is how many mbarriers get a TMA agent of their own; copies
// completing on further mbarriers share the last one (which can only
// hide hazards, never invent them).
const hbTMAAgents = 16

type hbState struct {
	nw     int
	vc     [][]uint32 // per warp: the clock of every agent it has acquired; vc[w][w] its own
	tmaClk []uint32   // per TMA agent: copies landed
	agent  map[uint64]int
	bars   map[uint64]*hbBar
	wClk   []uint32   // per byte: the last writer's clock (0: none); the writer is raceShadow.wWarp
	rClk   [][]uint32 // per warp, per byte: the clock of its last read (0: none)
}

// hbBar is the clocks an mbarrier gathers: pending from the arrivals
// and completions of the current phase, done the last completed phase of
// each parity.
type hbBar struct {
	pending []uint32
	done    [2][]uint32
}

// usesMbarriers reports whether k has mbarrier instructions: only then
// does racecheck track happens-before.
func usesMbarriers(k *kernel) bool {
	for i := range k.code {
		if strings.HasPrefix(k.code[i].text, "mbarrier.") {
			return true
		}
	}
	return false
}

func newHB(nw, shared int) *hbState {
	h := &hbState{nw: nw, vc: make([][]uint32, nw), rClk: make([][]uint32, nw), wClk: make([]uint32, shared),
		tmaClk: make([]uint32, hbTMAAgents), agent: map[uint64]int{}, bars: map[uint64]*hbBar{}}
	for w := range nw {
		h.vc[w] = make([]uint32, nw+hbTMAAgents)
		h.rClk[w] = make([]uint32, shared)
	}
	return h
}

// reset starts a block: every agent at clock 1, nothing acquired.
func (h *hbState) reset() {
	for w := range h.nw {
		clear(h.vc[w])
		h.vc[w][w] = 1
		clear(h.rClk[w])
	}
	clear(h.wClk)
	clear(h.tmaClk)
	clear(h.agent)
	clear(h.bars)
}

func join(dst, src []uint32) {
	for i, v := range src {
		dst[i] = max(dst[i], v)
	}
}

func (h *hbState) bar(off uint64) *hbBar {
	b := h.bars[off]
	if b == nil {
		b = &hbBar{pending: make([]uint32, len(h.vc[0]))}
		h.bars[off] = b
	}
	return b
}

// tmaAgent is the agent index of copies completing on the mbarrier at off.
func (h *hbState) tmaAgent(off uint64) int {
	a, ok := h.agent[off]
	if !ok {
		a = h.nw + min(len(h.agent), hbTMAAgents-1)
		h.agent[off] = a
	}
	return a
}

// release joins warp w's clocks into the current phase of the mbarrier
// at off (arrive, complete_tx).
func (h *hbState) release(w int, off uint64) { join(h.bar(off).pending, h.vc[w]) }

// tick starts a new clock for warp w after it released: what it does
// next is not covered by the release.
func (h *hbState) tick(w int) { h.vc[w][w]++ }

// completed records that the phase of the given parity of the mbarrier at
// off completed.
func (h *hbState) completed(off uint64, parity int) {
	b := h.bar(off)
	b.done[parity] = b.pending
	b.pending = make([]uint32, len(b.pending))
}

// acquire gives warp w what the completed phase of the given parity
// released (a successful wait).
func (h *hbState) acquire(w int, off uint64, parity int) {
	if b := h.bars[off]; b != nil && b.done[parity&1] != nil {
		join(h.vc[w], b.done[parity&1])
	}
}

// initBar forgets what the mbarrier at off gathered (mbarrier.init).
func (h *hbState) initBar(off uint64) { delete(h.bars, off) }

// syncWarps is bar.sync releasing the given warps: each acquires what
// every other had, then starts a new clock.
func (h *hbState) syncWarps(ws []int) {
	all := make([]uint32, len(h.vc[0]))
	for _, w := range ws {
		join(all, h.vc[w])
	}
	for _, w := range ws {
		copy(h.vc[w], all)
		h.vc[w][w]++
	}
}

// accessHB checks and records one lane's shared access of n bytes at off
// by warp w under happens-before.
func (r *raceShadow) accessHB(w *warp, l int, off uint64, n int, write, same bool) {
	h := r.hb
	me := w.id
	view := h.vc[me]
	pc := w.cur.pc
	for i := off; i < off+uint64(n) && !same; i++ {
		if a := int(r.wWarp[i]); h.wClk[i] != 0 && a != me && h.wClk[i] > view[a] {
			if tool := h.tool(w, a >= h.nw); tool != "" {
				what := "read-after-write hazard"
				if write {
					what = "write-after-write hazard"
				}
				w.san.record(w, l, tool, what, i, w.hbDetail(a, r.wPC[i], "wrote", i))
				break
			}
		}
		if write && w.san.race {
			if x := h.unorderedReader(i, view, me); x >= 0 {
				w.san.record(w, l, "racecheck", "write-after-read hazard", i, w.hbDetail(x, r.rPC[i], "read", i))
				break
			}
		}
	}
	for i := off; i < off+uint64(n); i++ {
		if write {
			r.wWarp[i], h.wClk[i], r.wPC[i] = int16(me), view[me], pc
			continue
		}
		h.rClk[me][i], r.rWarp[i], r.rPC[i] = view[me], int16(me), pc
	}
}

// unorderedReader returns a warp other than me whose last read of byte i
// is not ordered before an access with the clocks view, or -1.
func (h *hbState) unorderedReader(i uint64, view []uint32, me int) int {
	for x := range h.nw {
		if x != me && h.rClk[x][i] > view[x] {
			return x
		}
	}
	return -1
}

// landHB checks and records the shared bytes a TMA copy writes, as the
// agent of its mbarrier, ordered after what the issuer had acquired at
// issue (c.view), and releases them on the copy's mbarrier. w is the
// issuing warp; findings point at the copy's instruction.
func (r *raceShadow) landHB(w *warp, c *tmaCopy) {
	h := r.hb
	a := h.tmaAgent(c.bar)
	h.tmaClk[a-h.nw]++
	clk := h.tmaClk[a-h.nw]
	view := c.view
	view[a] = clk
	cur := w.cur
	w.cur = &w.code[c.pc]
	defer func() { w.cur = cur }()
	tool := h.tool(w, true)
	for _, off := range c.offs {
		for i := off; i < off+uint64(c.eb); i++ {
			if p := int(r.wWarp[i]); h.wClk[i] != 0 && p != a && h.wClk[i] > view[p] {
				w.san.record(w, c.lane, tool, "write-after-write hazard", i, w.hbDetail(p, r.wPC[i], "wrote", i)+" (the later write is a TMA copy)")
			} else if x := h.unorderedReader(i, view, -1); x >= 0 {
				w.san.record(w, c.lane, tool, "write-after-read hazard", i,
					w.hbDetail(x, r.rPC[i], "read", i)+": the TMA copy overwrote it before the reader released it (a missing or early mbarrier wait)")
			}
			r.wWarp[i], h.wClk[i], r.wPC[i] = int16(a), clk, c.pc
		}
	}
	b := h.bar(c.bar)
	b.pending[a] = max(b.pending[a], clk)
}

// tool is the sanitizer that reports a hazard: racecheck when it is on;
// otherwise synccheck for the hazards that involve a TMA copy (a tile
// read without waiting for its mbarrier, a stage refilled before it was
// released), and none for the rest.
func (h *hbState) tool(w *warp, tma bool) string {
	switch {
	case w.san.race:
		return "racecheck"
	case tma && w.san.sync:
		return "synccheck"
	}
	return ""
}

// hbDetail describes the earlier access of agent other (a warp or a TMA
// agent) at pc.
func (w *warp) hbDetail(other int, pc int32, did string, off uint64) string {
	if other < w.b.race.hb.nw {
		d := w.hazardDetail(other, pc, did, off)
		return strings.Replace(d, "with no barrier in between", "with no barrier or mbarrier wait ordering them", 1)
	}
	in := &w.code[pc]
	src := ""
	if in.loc.file != 0 {
		src = fmt.Sprintf(", %s:%d", w.k.files[in.loc.file], in.loc.line)
	}
	return fmt.Sprintf("warp %d accessed shared offset %#x, which a TMA copy issued at %s (PTX line %d%s) %s, with no mbarrier wait on the copy's completion in between",
		w.id, off, in.text, in.line, src, did)
}

// waitingAt lists the warps with lanes waiting at barrier id (called
// before the barrier releases them).
func (b *block) waitingAt(id int) []int {
	var ws []int
	for _, w := range b.warps {
		for mm := w.barBlk; mm != 0; mm &= mm - 1 {
			if int(w.barID[bits.TrailingZeros32(mm)]) == id {
				ws = append(ws, w.id)
				break
			}
		}
	}
	return ws
}
