package gpu

// Warp collectives of native mode: SyncWarp, shuffles and votes, each a
// rendezvous of the warp's lanes (32, or fewer in the partial last warp of
// a block whose size is not a multiple of 32).

import "unsafe"

// warp is the state the lanes of one warp share.
type warp struct {
	rv    rendezvous
	slots [WarpSize]laneSlot
	// wgA is every lane's wgmma A fragment, gathered by the last arriver
	// (native_wgmma.go).
	wgA [WarpSize][4]uint32
}

// laneSlot holds one lane's inputs and results of a warp collective.
type laneSlot struct {
	val uint64 // shuffle value (bit pattern), ballot predicate (0 or 1)
	src int    // shuffle source lane
	out uint64 // shuffle or ballot result

	a   [4]uint32      // MMA A fragment
	b   [2]uint32      // MMA B fragment
	c   [4]uint32      // MMA C fragment, as bit patterns
	d   [4]uint32      // MMA D fragment or LdMatrix registers
	ptr unsafe.Pointer // LdMatrix row address
}

func (w *warp) init(index, size int) { w.rv.init(index, size) }

func (th *thread) syncWarp() {
	w := th.warp
	if w.rv.arrive(th, waitInfo{kind: kindSyncWarp}) {
		w.rv.release(th.blk)
	}
}

// shuffle returns v of lane src(Lane()). A source lane outside the warp
// (past a partial warp's last lane, or outside 0..31) gives the caller its
// own v, as shfl.sync does for an out-of-range lane.
func shuffle[T Word](th *thread, v T, src func(int) int) T {
	w := th.warp
	s := &w.slots[th.lane]
	s.val, s.src = wordBits(v), src(th.lane)
	if w.rv.arrive(th, waitInfo{kind: kindShfl}) {
		n := w.rv.size
		for l := range n {
			j := w.slots[l].src
			if j < 0 || j >= n {
				j = l
			}
			w.slots[l].out = w.slots[j].val
		}
		w.rv.release(th.blk)
	}
	return wordFrom[T](s.out)
}

// ballot returns the mask of lanes whose pred is true; lanes missing from a
// partial warp count as false.
func ballot(th *thread, pred bool) uint32 {
	w := th.warp
	s := &w.slots[th.lane]
	s.val = 0
	if pred {
		s.val = 1
	}
	if w.rv.arrive(th, waitInfo{kind: kindBallot}) {
		var mask uint64
		for l := range w.rv.size {
			mask |= w.slots[l].val << l
		}
		for l := range w.rv.size {
			w.slots[l].out = mask
		}
		w.rv.release(th.blk)
	}
	return uint32(s.out)
}

// warpLanes is the mask of the lanes the caller's warp has: all 32, or
// fewer in the partial last warp of a block.
func warpLanes(th *thread) uint32 {
	if n := th.warp.rv.size; n < WarpSize {
		return 1<<n - 1
	}
	return ^uint32(0)
}
