package ir

import "sort"

// Rematerialising thread-identity values after a loop.
//
// A value computed only from the thread's identity (%tid, %ntid, %ctaid,
// %nctaid, %laneid: fixed for the thread's whole life, PTX ISA §10) and
// constants is the same wherever it is computed. When such a value is
// computed before a loop, not read in it, and read after it (a warp's
// output index, read by the store after its K loop), it occupies registers
// through the loop, where ptxas's unrolled, branch-free body wants them for
// loads in flight: llm/qwen3 matmulF32's 64-bit warp index costs 4
// registers on sm_90 (28 against 24) that way. ptxas does not rematerialise
// it, but it does not merge a second computation after the loop with the
// first either, so computing it again there ends the first one's life
// before the loop: a few integer instructions and an S2R outside the loop
// for registers inside it.
//
// The pass changes only which register an after-loop read names; the
// value read is the same, so it needs no proof beyond the definition
// chain's shape (chainOf in rematerializeAfterLoops).

// rematSpecials are the special registers that are constant for a thread's
// lifetime (PTX ISA §10.1–10.11). %warpid and %smid are not: a thread may
// migrate between warp slots and SMs.
var rematSpecials = map[string]bool{
	"%tid.x": true, "%tid.y": true, "%tid.z": true,
	"%ntid.x": true, "%ntid.y": true, "%ntid.z": true,
	"%ctaid.x": true, "%ctaid.y": true, "%ctaid.z": true,
	"%nctaid.x": true, "%nctaid.y": true, "%nctaid.z": true,
	"%laneid": true,
}

// rematOps are the integer ops a chain may use: pure, no rounding, no
// division (a subroutine, not worth repeating).
var rematOps = map[Op]bool{
	OpMov: true, OpCvt: true, OpAdd: true, OpSub: true, OpMul: true, OpMad: true,
	OpShl: true, OpShr: true, OpAnd: true, OpOr: true, OpXor: true, OpMin: true, OpMax: true,
}

// rematMaxChain bounds the instructions recomputed for one value (the warp
// index ctaid.x·(ntid.x/32)+tid.x/32 with its conversions is 10).
const rematMaxChain = 12

// rematerializeAfterLoops recomputes, in each loop-free block after a loop,
// the thread-identity values that are live through the loop but not read
// in it.
func rematerializeAfterLoops(f *Func) {
	if len(f.Blocks) < 2 {
		return
	}
	defs, _ := countRegs(f)
	defAt := make(map[Reg]*Instr)
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			if r, ok := soleDest(in); ok && defs[r] == 1 {
				defAt[r] = in
			}
		}
	}
	chains := map[Reg][]*Instr{}
	var chainOf func(r Reg, seen map[Reg]bool, out *[]*Instr) bool
	chainOf = func(r Reg, seen map[Reg]bool, out *[]*Instr) bool {
		if seen[r] {
			return true
		}
		in := defAt[r]
		if in == nil || !rematOps[in.Op] || f.Regs[r] == Pred || f.Regs[r].IsFloat() {
			return false
		}
		for _, a := range in.Args[1:] {
			switch a.Kind {
			case KImm:
			case KSpecial:
				if !rematSpecials[a.Sym] {
					return false
				}
			case KReg:
				if !chainOf(a.Reg, seen, out) {
					return false
				}
			default:
				return false
			}
		}
		seen[r] = true
		// A copy: the renaming below rewrites the operands of
		// instructions in place, chain members among them (a chain's
		// instruction may itself sit after an earlier loop), and a chain
		// must be cloned from its original operands.
		c := *in
		c.Args = append([]Operand(nil), in.Args...)
		*out = append(*out, &c)
		return len(*out) <= rematMaxChain
	}
	// Candidates: thread-identity values read in a block other than their
	// defining one (only those can be live across a loop).
	defBlock := map[Reg]int{}
	for bi, b := range f.Blocks {
		for _, in := range b.Instrs {
			if r, ok := soleDest(in); ok && defAt[r] == in {
				defBlock[r] = bi
			}
		}
	}
	var cands []Reg
	candIdx := map[Reg]int{}
	for bi, b := range f.Blocks {
		for _, in := range b.Instrs {
			forUses(in, func(r Reg) {
				db, ok := defBlock[r]
				if !ok || db == bi {
					return
				}
				if _, done := candIdx[r]; done {
					return
				}
				if _, tried := chains[r]; !tried {
					var out []*Instr
					if !chainOf(r, map[Reg]bool{}, &out) {
						out = nil
					}
					chains[r] = out
				}
				if chains[r] != nil {
					candIdx[r] = len(cands)
					cands = append(cands, r)
				}
			})
		}
	}
	if len(cands) == 0 {
		return
	}
	g := newCFG(f)
	dom := dominators(f)
	loops := g.naturalLoops(dom)
	if len(loops) == 0 {
		return
	}
	inLoop := make([]bool, len(f.Blocks))
	for _, l := range loops {
		for b := range l.blocks {
			inLoop[b] = true
		}
	}
	live := g.liveIn(f, cands, candIdx)
	// mentioned[b] holds the candidates block b reads or writes.
	mentioned := make([]bitset, len(f.Blocks))
	for bi, b := range f.Blocks {
		mentioned[bi] = newBitset(len(cands))
		for _, in := range b.Instrs {
			forUses(in, func(r Reg) {
				if i, ok := candIdx[r]; ok {
					mentioned[bi].set(i)
				}
			})
		}
	}
	// For each loop, the candidates that pass through it unread, and the
	// blocks after it (reachable from it, outside it).
	redo := make([]map[Reg]bool, len(f.Blocks)) // block -> candidates to recompute there
	for _, l := range loops {
		through := live[l.header].clone()
		for b := range l.blocks {
			through.andNot(mentioned[b])
		}
		if through.empty() {
			continue
		}
		after := g.reachableFrom(l.blocks)
		for i := range cands {
			if !through.has(i) {
				continue
			}
			// Every read after the loop must be in a loop-free block, or
			// the value stays live through this loop for that read anyway
			// (and recomputing inside another loop would repeat it there).
			ok := true
			for b := range after {
				if mentioned[b].has(i) && inLoop[b] {
					ok = false
				}
			}
			if !ok {
				continue
			}
			for b := range after {
				if mentioned[b].has(i) {
					if redo[b] == nil {
						redo[b] = map[Reg]bool{}
					}
					redo[b][cands[i]] = true
				}
			}
		}
	}
	// In reverse postorder, so a block's dominators come first: a block
	// dominated by one that already recomputed a value reads that copy
	// (the failure path after a bounds check on the output index).
	order := make([]int, 0, len(f.Blocks))
	for bi := range f.Blocks {
		if dom.rpo[bi] >= 0 && len(redo[bi]) > 0 {
			order = append(order, bi)
		}
	}
	sortBy(order, func(b int) int { return dom.rpo[b] })
	type copyAt struct {
		block int
		reg   Reg
	}
	copies := map[Reg][]copyAt{}
	for _, bi := range order {
		again := map[Reg]bool{}
		reuse := map[Reg]Reg{}
		for r := range redo[bi] {
			found := false
			for _, c := range copies[r] {
				if dom.dominates(c.block, bi) {
					reuse[r], found = c.reg, true
					break
				}
			}
			if !found {
				again[r] = true
			}
		}
		for _, in := range f.Blocks[bi].Instrs {
			renameOperands(in, func(r Reg) Reg {
				if c, ok := reuse[r]; ok {
					return c
				}
				return r
			})
		}
		for r, c := range recomputeIn(f, f.Blocks[bi], again, chains) {
			copies[r] = append(copies[r], copyAt{bi, c})
		}
	}
}

// recomputeIn emits, before the first instruction of b that reads one of
// regs, a fresh copy of each one's definition chain, renames every read of
// them in b to the copies, and returns the copy of each.
func recomputeIn(f *Func, b *Block, regs map[Reg]bool, chains map[Reg][]*Instr) map[Reg]Reg {
	first := -1
	for i, in := range b.Instrs {
		forUses(in, func(r Reg) {
			if regs[r] && first < 0 {
				first = i
			}
		})
		if first >= 0 {
			break
		}
	}
	if first < 0 {
		return nil
	}
	fresh := map[Reg]Reg{}
	var code []*Instr
	// Emit in a fixed order (registers ascending) so the PTX is stable.
	var order []Reg
	for r := range regs {
		order = append(order, r)
	}
	sortBy(order, func(r Reg) int { return int(r) })
	for _, r := range order {
		for _, in := range chains[r] {
			d := in.Args[0].Reg
			if _, done := fresh[d]; done {
				continue
			}
			c := *in
			c.Args = append([]Operand(nil), in.Args...)
			// Every register operand is an earlier member of the chain
			// (chainOf appends operands' definitions first), so fresh
			// holds its copy.
			for j := 1; j < len(c.Args); j++ {
				if c.Args[j].Kind == KReg {
					c.Args[j].Reg = fresh[c.Args[j].Reg]
				}
			}
			nd := f.NewReg(f.Regs[d])
			c.Args[0].Reg = nd
			fresh[d] = nd
			code = append(code, &c)
		}
	}
	for _, in := range b.Instrs[first:] {
		renameOperands(in, func(r Reg) Reg {
			if regs[r] {
				return fresh[r]
			}
			return r
		})
	}
	out := make([]*Instr, 0, len(b.Instrs)+len(code))
	out = append(out, b.Instrs[:first]...)
	out = append(out, code...)
	b.Instrs = append(out, b.Instrs[first:]...)
	copies := make(map[Reg]Reg, len(regs))
	for r := range regs {
		copies[r] = fresh[r]
	}
	return copies
}

// forUses calls fn for each register in reads, per countInstr's
// conservative rules (an operand of an op outside destOps counts as read).
func forUses(in *Instr, fn func(Reg)) {
	if in.Guarded {
		fn(in.Guard)
	}
	for i, a := range in.Args {
		if destOps[in.Op] && i == 0 && a.Kind != KAddr && !noDefOps[in.Op] {
			continue
		}
		operandRegs(a, fn)
	}
}

// sortBy sorts xs by key, ascending.
func sortBy[T any](xs []T, key func(T) int) {
	sort.Slice(xs, func(i, j int) bool { return key(xs[i]) < key(xs[j]) })
}
