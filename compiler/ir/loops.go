package ir

import "math/bits"

// cfg is a Func's control-flow graph by block position, for the passes
// that need loops and liveness (remat.go).
type cfg struct {
	succ, preds [][]int
}

func newCFG(f *Func) *cfg {
	index := byLabel(f)
	pos := make(map[*Block]int, len(f.Blocks))
	for i, b := range f.Blocks {
		pos[b] = i
	}
	g := &cfg{succ: make([][]int, len(f.Blocks)), preds: make([][]int, len(f.Blocks))}
	for i, b := range f.Blocks {
		for _, l := range successors(b) {
			if t, ok := index[l]; ok {
				j := pos[t]
				g.succ[i] = append(g.succ[i], j)
				g.preds[j] = append(g.preds[j], i)
			}
		}
	}
	return g
}

// loop is a natural loop: its header and every block of its body (the
// header included), the union over the header's back edges.
type loop struct {
	header int
	blocks map[int]bool
}

// naturalLoops finds the loops of reducible control flow: an edge t→h
// whose target dominates its source is a back edge, and the loop is h
// with every block that reaches t without passing h. (Kern's lowering
// makes only such loops; an irreducible cycle would have no back edge
// and be missed, which only means nothing is done for it.)
func (g *cfg) naturalLoops(dom *domTree) []*loop {
	byHeader := map[int]*loop{}
	var out []*loop
	for t, ss := range g.succ {
		for _, h := range ss {
			if !dom.dominates(h, t) {
				continue
			}
			l := byHeader[h]
			if l == nil {
				l = &loop{header: h, blocks: map[int]bool{h: true}}
				byHeader[h] = l
				out = append(out, l)
			}
			work := []int{t}
			for len(work) > 0 {
				b := work[len(work)-1]
				work = work[:len(work)-1]
				if l.blocks[b] {
					continue
				}
				l.blocks[b] = true
				work = append(work, g.preds[b]...)
			}
		}
	}
	return out
}

// reachableFrom returns the blocks reachable from the set's blocks by one
// or more edges that are not themselves in the set.
func (g *cfg) reachableFrom(set map[int]bool) map[int]bool {
	seen := map[int]bool{}
	var work []int
	for b := range set {
		work = append(work, g.succ[b]...)
	}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[b] || set[b] {
			continue
		}
		seen[b] = true
		work = append(work, g.succ[b]...)
	}
	return seen
}

// liveIn computes, for the registers regs (indexed by idx), which are live
// on entry to each block: read on some path from there before being
// written. The usual backward dataflow, iterated to a fixed point.
func (g *cfg) liveIn(f *Func, regs []Reg, idx map[Reg]int) []bitset {
	n := len(f.Blocks)
	use, def, in := make([]bitset, n), make([]bitset, n), make([]bitset, n)
	for bi, b := range f.Blocks {
		use[bi], def[bi], in[bi] = newBitset(len(regs)), newBitset(len(regs)), newBitset(len(regs))
		for _, ins := range b.Instrs {
			forUses(ins, func(r Reg) {
				if i, ok := idx[r]; ok && !def[bi].has(i) {
					use[bi].set(i)
				}
			})
			if r, ok := soleDest(ins); ok {
				if i, ok := idx[r]; ok {
					def[bi].set(i)
				}
			}
		}
	}
	out := newBitset(len(regs))
	for changed := true; changed; {
		changed = false
		for bi := n - 1; bi >= 0; bi-- {
			out.clear()
			for _, s := range g.succ[bi] {
				out.or(in[s])
			}
			out.andNot(def[bi])
			out.or(use[bi])
			if !out.equal(in[bi]) {
				copy(in[bi], out)
				changed = true
			}
		}
	}
	return in
}

// bitset is a fixed-size set of small integers.
type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (s bitset) set(i int)      { s[i/64] |= 1 << (i % 64) }
func (s bitset) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s bitset) clone() bitset  { return append(bitset(nil), s...) }
func (s bitset) or(t bitset) {
	for i := range s {
		s[i] |= t[i]
	}
}
func (s bitset) andNot(t bitset) {
	for i := range s {
		s[i] &^= t[i]
	}
}
func (s bitset) clear() { clear(s) }
func (s bitset) equal(t bitset) bool {
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}
func (s bitset) empty() bool {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n == 0
}
