package ir

// Repacking a split word: "mov.b32 d, {lo(w), hi(w)}" is "mov.b32 d, w".
//
// gpu.Load8 of 16-bit elements loads four 32-bit words (PTX has no .v8 of
// .b16) and splits each into its halves,
//
//	cvt.u16.u32 a, w;  shr.u32 t, w, 16;  cvt.u16.u32 b, t
//
// and the kernel then packs adjacent elements back into words for the
// tensor cores or packed arithmetic (gpu.PackBFloat162, PackHalf2, Store8),
// often through the registers of a Go array ("mov.u16 a', a"):
//
//	mov.b32 d, {a', b'}
//
// which is w again: mov.b32 with a vector source puts its first element
// in bits 0..15 (PTX ISA §9.7.9.1, mov), cvt to a 16-bit integer type
// keeps the low 16 bits (§9.7.9.21, cvt: integer narrowing truncates), and
// the shift by 16 brings bits 16..31 down, whatever it shifts in. ptxas
// does not see through this: the SASS keeps a SHF.R.U32.HI and a PRMT per
// word, about two thirds of a decode GEMV's loop body. The pass rewrites
// the pack to read w, and dce then drops the halves nobody else reads.
//
// The IR is not SSA (a register may be written many times: an array
// element's register, a phi's), so the pass proves the equality inside
// one block only, walking it in order and tracking what each 16-bit
// register holds: "the low (high) half of w as it was after w's n-th
// write in this block". Every write to a register (any operand of an op
// whose destinations are not modelled, a predicated write included)
// advances its write count and forgets what was known about it, so a fact
// about a half of w is used only while w still holds the value it was
// split from. Only an unpredicated split or copy creates a fact.

// halfFact says a 16-bit register holds a half of word as it was at word's
// write count ver.
type halfFact struct {
	word Reg
	ver  int
	hi   bool
}

// shiftFact says a 32-bit register holds word>>16 (of word at ver).
type shiftFact struct {
	word Reg
	ver  int
}

// repackSplitWords rewrites, block by block, a pack of a word's two halves
// in order into a copy of the word.
func repackSplitWords(f *Func) {
	for _, b := range f.Blocks {
		ver := map[Reg]int{}
		halves := map[Reg]halfFact{}
		shifted := map[Reg]shiftFact{}
		half := func(r Reg) (halfFact, bool) {
			h, ok := halves[r]
			return h, ok && ver[h.word] == h.ver
		}
		for _, in := range b.Instrs {
			// The rewrite reads the facts before in's own writes.
			if w, ok := packedWord(f, in, half); ok {
				in.Args[1] = R(w)
			}
			// Facts in creates, from its operands before its writes.
			var newHalf *halfFact
			var newShift *shiftFact
			if d, ok := soleDest(in); ok {
				switch {
				case isNarrowCvt(f, in):
					x := in.Args[1].Reg
					if s, ok := shifted[x]; ok && ver[s.word] == s.ver {
						newHalf = &halfFact{s.word, s.ver, true}
					} else {
						newHalf = &halfFact{x, ver[x], false}
					}
				case isShr16(f, in):
					x := in.Args[1].Reg
					newShift = &shiftFact{x, ver[x]}
				case in.Op == OpMov && f.Regs[d].Bits() == 16 && in.Args[1].Kind == KReg:
					if h, ok := half(in.Args[1].Reg); ok {
						newHalf = &h
					}
				}
			}
			forDefs(in, func(r Reg) {
				ver[r]++
				delete(halves, r)
				delete(shifted, r)
			})
			// A fact about its own source (shr w, w, 16) names a write
			// count that has just passed, so it never holds.
			if newHalf != nil {
				halves[in.Args[0].Reg] = *newHalf
			}
			if newShift != nil {
				shifted[in.Args[0].Reg] = *newShift
			}
		}
	}
}

// packedWord returns w when in is "mov.b32 d, {a, b}" with a the low and b
// the high half of w's current value.
func packedWord(f *Func, in *Instr, half func(Reg) (halfFact, bool)) (Reg, bool) {
	if in.Op != OpMov || in.Text != "mov.b32" || len(in.Args) != 2 || in.Args[0].Kind != KReg ||
		in.Args[1].Kind != KVec || len(in.Args[1].Vec) != 2 {
		return 0, false
	}
	lo, ok1 := half(in.Args[1].Vec[0])
	hi, ok2 := half(in.Args[1].Vec[1])
	if !ok1 || !ok2 || lo.hi || !hi.hi || lo.word != hi.word || lo.ver != hi.ver {
		return 0, false
	}
	if f.Regs[lo.word].Bits() != 32 || f.Regs[lo.word].IsFloat() || f.Regs[in.Args[0].Reg].Bits() != 32 {
		return 0, false
	}
	return lo.word, true
}

// isNarrowCvt reports whether in is an unpredicated cvt of a 32-bit
// integer register to a 16-bit integer, which keeps its low 16 bits (no
// .sat: that would clamp instead).
func isNarrowCvt(f *Func, in *Instr) bool {
	switch in.Text {
	case "cvt.u16.u32", "cvt.s16.u32", "cvt.u16.s32", "cvt.s16.s32":
	default:
		return false
	}
	return len(in.Args) == 2 && in.Args[1].Kind == KReg && f.Regs[in.Args[1].Reg].Bits() == 32
}

// isShr16 reports whether in is a 32-bit right shift by 16 of a register.
// An arithmetic shift qualifies too: it differs only in bits 16..31 of the
// result, which a narrowing cvt drops.
func isShr16(f *Func, in *Instr) bool {
	switch in.Text {
	case "shr.u32", "shr.b32", "shr.s32":
	default:
		return false
	}
	if len(in.Args) != 3 {
		return false
	}
	a, n := in.Args[1], in.Args[2]
	return a.Kind == KReg && f.Regs[a.Reg].Bits() == 32 && n.Kind == KImm && n.Imm == 16
}

// forDefs calls fn for each register in may write, per countInstr's
// conservative rules: the destinations of a destOp, nothing of a noDefOp,
// and every register operand of any other op.
func forDefs(in *Instr, fn func(Reg)) {
	switch {
	case noDefOps[in.Op]:
	case destOps[in.Op]:
		if len(in.Args) > 0 && in.Args[0].Kind != KAddr {
			operandRegs(in.Args[0], fn)
		}
	default:
		for _, a := range in.Args {
			operandRegs(a, fn)
		}
	}
}
