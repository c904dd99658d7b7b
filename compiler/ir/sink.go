package ir

import "strings"

// sinkLoadUses moves the arithmetic on a loaded value down its block, past
// the conditional branches out of the block, to just before the first
// instruction that reads its result (or the block's end).
//
// Why: a warp issues in order, and ptxas schedules within the basic blocks
// that branches cut. A device bounds check is such a branch in the middle
// of a kern block (lowering's failWhen), so in
//
//	at := int(pos[r]); slot := int(slots[r])
//
// the widening of pos[r] sits before the check of r against len(slots):
// the warp waits there for pos[r] to arrive, and only then checks and
// loads slots[r]: a round trip to memory each, where the two loads could
// share one (qkvPrep's SASS had SHF.R.S32.HI of the first load ahead of
// the second check's BRA). After this pass the widening follows the second
// load, and both are in flight together.
//
// An instruction moves when it is pure, unguarded and defines one
// register, and every register it reads was defined earlier in the block
// by a load (not of a parameter) or another such instruction: so moving it
// lengthens the life of no other value, which ptxas would otherwise pay
// for in registers or code (sinking index arithmetic that also read a
// base and a stride cost FlashBF16D64 88 more SASS). It stops before the first
// instruction that reads its result or writes any register it reads or
// writes, before a branch to a block where its result is live, and before
// anything other than pure arithmetic, loads, stores, prefetches and
// conditional branches. It moves only when that takes it past a branch.
// Results are unchanged: the moved instruction reads the same registers,
// and no path that leaves the block early reads what it computes.
func sinkLoadUses(f *Func) {
	if len(f.Blocks) == 0 {
		return
	}
	cand := make([][]bool, len(f.Blocks)) // per block, per instruction: a candidate
	idx := map[Reg]int{}
	var regs []Reg
	for bi, b := range f.Blocks {
		cand[bi] = make([]bool, len(b.Instrs))
		loaded := map[Reg]bool{}
		for i, in := range b.Instrs {
			if isSlowLoad(in) {
				forDefs(in, func(r Reg) { loaded[r] = true })
				continue
			}
			// Every register it reads is loaded (a chain such as widen,
			// then scale, of one value): moving it then lengthens no
			// other value's life.
			reads, only := false, true
			forUses(in, func(r Reg) {
				reads = reads || loaded[r]
				only = only && loaded[r]
			})
			if r, ok := soleDest(in); ok && pureOps[in.Op] && reads && only {
				loaded[r] = true
				cand[bi][i] = true
				if _, seen := idx[r]; !seen {
					idx[r] = len(regs)
					regs = append(regs, r)
				}
				continue
			}
			forDefs(in, func(r Reg) { delete(loaded, r) })
		}
	}
	if len(regs) == 0 {
		return
	}
	g := newCFG(f)
	live := g.liveIn(f, regs, idx)
	labels := make(map[string]int, len(f.Blocks))
	for i, b := range f.Blocks {
		labels[b.Label] = i
	}
	for bi, b := range f.Blocks {
		for i := len(b.Instrs) - 1; i >= 0; i-- {
			if !cand[bi][i] {
				continue
			}
			in := b.Instrs[i]
			d, _ := soleDest(in)
			touches := map[Reg]bool{d: true} // what no instruction it passes may write
			forUses(in, func(r Reg) { touches[r] = true })
			stop, crossed := len(b.Instrs), false
		scan:
			for j := i + 1; j < len(b.Instrs); j++ {
				next := b.Instrs[j]
				reads, writes := false, false
				forUses(next, func(r Reg) { reads = reads || r == d })
				forDefs(next, func(r Reg) { writes = writes || touches[r] })
				if reads || writes {
					stop = j
					break
				}
				switch {
				case next.Op == OpBra && next.Guarded:
					t, ok := labels[next.Args[0].Sym]
					if !ok || live[t].has(idx[d]) {
						stop = j
						break scan
					}
					crossed = true
				case pureOps[next.Op], next.Op == OpLd, next.Op == OpSt, next.Op == OpPrefetch:
				default:
					stop = j
					break scan
				}
			}
			if !crossed {
				continue
			}
			// Move in from i to just before stop.
			copy(b.Instrs[i:stop-1], b.Instrs[i+1:stop])
			b.Instrs[stop-1] = in
			copy(cand[bi][i:stop-1], cand[bi][i+1:stop])
			cand[bi][stop-1] = false // placed: not moved again
		}
	}
}

// isSlowLoad says whether in is a load whose result is a round trip away:
// any ld but a kernel parameter's (a constant-bank read), and atomics.
func isSlowLoad(in *Instr) bool {
	switch in.Op {
	case OpLd:
		return !strings.Contains(in.Text, ".param")
	case OpAtom:
		return true
	}
	return false
}
