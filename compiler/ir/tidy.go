package ir

import (
	"fmt"
	"strings"
)

// The tidying passes: lowering emits one PTX register per go/ssa value and
// turns every phi into moves on the incoming edges, so a loop step reads
// "add t, i, s; mov i, t" and a load into a phi "ld t, [a]; mov x, t".
// ptxas removes those copies itself, so the SASS is the same either way,
// but the PTX is what kern ships (as text, in the generated files), what
// the emulator interprets instruction by instruction, and what a kernel
// author reads; both passes here make it shorter without changing what it
// computes.
//
// Both work from a conservative count of each register's definitions and
// uses. An instruction's destinations are known precisely only for the
// ops listed in destOps (Args[0], a register or a vector of them); for
// every other op each register operand counts as a definition and as a
// use, and a predicated instruction's destination counts twice, so that
// nothing these passes do relies on an operand form they do not model.

// destOps are the ops whose Args[0] is their only destination and whose
// other operands are only read.
var destOps = map[Op]bool{
	OpMov: true, OpAdd: true, OpSub: true, OpMul: true, OpMad: true, OpFma: true,
	OpDiv: true, OpRem: true, OpNeg: true, OpAbs: true, OpMin: true, OpMax: true,
	OpAnd: true, OpOr: true, OpXor: true, OpNot: true, OpShl: true, OpShr: true,
	OpPopc: true, OpClz: true, OpBrev: true, OpPrmt: true, OpDp4a: true, OpSetp: true, OpSelp: true,
	OpCvt: true, OpCvta: true, OpLd: true, OpSqrt: true, OpRsqrt: true,
	OpRcp: true, OpEx2: true, OpLg2: true, OpSin: true, OpCos: true,
	OpTanh: true, OpCopysign: true,
	// Args[0] a vector of registers: the fragments written.
	OpMma: true, OpLdmatrix: true,
}

// pureOps are the destOps with no effect besides their destination, which
// may be deleted when that destination is never read. Loads stay: one
// that would fault must still fault.
var pureOps = map[Op]bool{
	OpMov: true, OpAdd: true, OpSub: true, OpMul: true, OpMad: true, OpFma: true,
	OpNeg: true, OpAbs: true, OpMin: true, OpMax: true, OpAnd: true, OpOr: true,
	OpXor: true, OpNot: true, OpShl: true, OpShr: true, OpPopc: true,
	OpClz: true, OpBrev: true, OpPrmt: true, OpDp4a: true, OpSetp: true, OpSelp: true, OpCvt: true,
	OpCvta: true, OpSqrt: true, OpRsqrt: true, OpRcp: true, OpEx2: true,
	OpLg2: true, OpSin: true, OpCos: true, OpTanh: true, OpCopysign: true,
}

// noDefOps write no register: their register operands are all read.
var noDefOps = map[Op]bool{
	OpSt: true, OpBra: true, OpBar: true, OpBarWarp: true, OpMembar: true,
	OpCpAsync: true, OpCpAsyncCommit: true, OpCpAsyncWait: true,
	OpRet: true, OpExit: true, OpTrap: true, OpNanosleep: true, OpPragma: true,
	OpPrefetch: true,
}

// operandRegs calls fn for each register an operand names.
func operandRegs(a Operand, fn func(Reg)) {
	switch a.Kind {
	case KReg:
		fn(a.Reg)
	case KAddr:
		if a.Sym == "" {
			fn(a.Reg)
		}
		// A tensor address [map, {c0, c1}] also reads its coordinates.
		for _, r := range a.Vec {
			fn(r)
		}
	case KVec:
		for _, r := range a.Vec {
			fn(r)
		}
	}
}

// soleDest returns the register an instruction alone defines, when it is
// an unpredicated destOp writing one register.
func soleDest(in *Instr) (Reg, bool) {
	if !destOps[in.Op] || in.Guarded || len(in.Args) == 0 || in.Args[0].Kind != KReg {
		return 0, false
	}
	return in.Args[0].Reg, true
}

// countRegs counts each register's definitions and uses in f, per the
// conservative rules in the file comment.
func countRegs(f *Func) (defs, uses []int) {
	defs, uses = make([]int, len(f.Regs)), make([]int, len(f.Regs))
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			countInstr(in, defs, uses, 1)
		}
	}
	return defs, uses
}

// countInstr adds d times in's definitions and uses to the counts.
func countInstr(in *Instr, defs, uses []int, d int) {
	if in.Guarded {
		uses[in.Guard] += d
	}
	def := func(r Reg) {
		defs[r] += d
		if in.Guarded {
			defs[r] += d
		}
	}
	use := func(r Reg) { uses[r] += d }
	for i, a := range in.Args {
		switch {
		case noDefOps[in.Op]:
			operandRegs(a, use)
		case destOps[in.Op] && i == 0:
			if a.Kind == KAddr {
				operandRegs(a, use)
			} else {
				operandRegs(a, def)
			}
		case destOps[in.Op]:
			operandRegs(a, use)
		default:
			operandRegs(a, def)
			operandRegs(a, use)
		}
	}
}

// coalesceCopies folds "op t, ...; mov x, t" into "op x, ..." when t is
// defined once, read only by that mov, both lie in one block with no
// mention of x between them, and t and x have one register type. This is
// the shape every phi move and every load or arithmetic result feeding a
// phi has.
func coalesceCopies(f *Func) {
	defs, uses := countRegs(f)
	for _, b := range f.Blocks {
		defAt := map[Reg]int{} // register -> index in b of its sole definition
		out := b.Instrs[:0]
		for _, in := range b.Instrs {
			if x, ok := soleDest(in); ok && in.Op == OpMov && in.Args[1].Kind == KReg {
				t := in.Args[1].Reg
				if j, seen := defAt[t]; seen && defs[t] == 1 && uses[t] == 1 && t != x && f.Regs[t] == f.Regs[x] && !mentions(out[j+1:], x) {
					out[j].Args[0] = R(x)
					delete(defAt, t)
					defAt[x] = j
					defs[t], uses[t] = 0, 0
					continue
				}
			}
			if r, ok := soleDest(in); ok {
				defAt[r] = len(out)
			}
			out = append(out, in)
		}
		b.Instrs = out
	}
}

// coalesceVectorCopies is coalesceCopies for the elements of a vector
// destination (mma's D fragment, ldmatrix's registers): lowering writes
// fresh registers and copies them into the accumulator's, one mov each.
func coalesceVectorCopies(f *Func) {
	defs, uses := countRegs(f)
	for _, b := range f.Blocks {
		type site struct{ at, elem int }
		defAt := map[Reg]site{}
		out := b.Instrs[:0]
		for _, in := range b.Instrs {
			if x, ok := soleDest(in); ok && in.Op == OpMov && in.Args[1].Kind == KReg {
				t := in.Args[1].Reg
				if s, seen := defAt[t]; seen && defs[t] == 1 && uses[t] == 1 && t != x && f.Regs[t] == f.Regs[x] && !mentions(out[s.at:s.at+1], x) && !mentions(out[s.at+1:], x) {
					d := out[s.at]
					v := append([]Reg(nil), d.Args[0].Vec...)
					v[s.elem] = x
					d.Args[0].Vec = v
					delete(defAt, t)
					continue
				}
			}
			if !in.Guarded && destOps[in.Op] && len(in.Args) > 0 && in.Args[0].Kind == KVec {
				for k, r := range in.Args[0].Vec {
					defAt[r] = site{len(out), k}
				}
			}
			out = append(out, in)
		}
		b.Instrs = out
	}
}

// forwardCopies removes "mov a, b" whose a is defined only there and read
// once, later in the same block, with no instruction between naming b:
// that reader may read b itself (the copies of an accumulator into an mma
// fragment's C registers).
func forwardCopies(f *Func) {
	defs, uses := countRegs(f)
	for _, b := range f.Blocks {
		drop := map[*Instr]bool{}
		for i, in := range b.Instrs {
			a, ok := soleDest(in)
			if !ok || in.Op != OpMov || in.Args[1].Kind != KReg || defs[a] != 1 || uses[a] != 1 {
				continue
			}
			src := in.Args[1].Reg
			if src == a || f.Regs[src] != f.Regs[a] || defs[src] == 0 {
				continue
			}
			// 64 instructions bound the search in long unrolled blocks.
			for j := i + 1; j < len(b.Instrs) && j <= i+64; j++ {
				if !mentions(b.Instrs[j:j+1], a) {
					if mentions(b.Instrs[j:j+1], src) {
						break
					}
					continue
				}
				renameOperands(b.Instrs[j], func(r Reg) Reg {
					if r == a {
						return src
					}
					return r
				})
				drop[in] = true
				break
			}
		}
		if len(drop) > 0 {
			out := b.Instrs[:0]
			for _, in := range b.Instrs {
				if !drop[in] {
					out = append(out, in)
				}
			}
			b.Instrs = out
		}
	}
}

// mentions reports whether any of ins names r as an operand or guard.
func mentions(ins []*Instr, r Reg) bool {
	for _, in := range ins {
		if in.Guarded && in.Guard == r {
			return true
		}
		found := false
		for _, a := range in.Args {
			operandRegs(a, func(x Reg) { found = found || x == r })
		}
		if found {
			return true
		}
	}
	return false
}

// removeDeadCode deletes pure instructions whose destination is never
// read (the %tid.y of a kernel that uses only t.ThreadIdx().X, an
// address computed twice by the lowering and used once), repeating until
// none is left, since each deletion may leave its operands unread.
func removeDeadCode(f *Func) {
	defs, uses := countRegs(f)
	for changed := true; changed; {
		changed = false
		for _, b := range f.Blocks {
			out := b.Instrs[:0]
			for _, in := range b.Instrs {
				if r, ok := soleDest(in); ok && pureOps[in.Op] && uses[r] == 0 {
					countInstr(in, defs, uses, -1)
					changed = true
					continue
				}
				out = append(out, in)
			}
			b.Instrs = out
		}
	}
}

// eliminateCommonSubexprs walks the dominator tree and replaces an
// instruction by the result of an identical one before it in its block
// (after the merge pass, a straight-line chain such as an unrolled loop is
// one block), and a copy by its source when that dominates it: the
// lowering recomputes a thread index, a row offset or a tile base at each
// use (an unrolled loop has one copy per iteration), and a copy "mov d, r"
// of a register is the same case with r as the result. An instruction
// qualifies when it is pure, defines its register once, and every
// register it reads is defined once at a point dominating it, so both
// instructions see the same operand values (an operand redefined between
// them would need a path around the dominating one). Its uses then read
// the dominating result instead, which no instruction redefines.
func eliminateCommonSubexprs(f *Func) {
	if len(f.Blocks) == 0 {
		return
	}
	defs, _ := countRegs(f)
	dom := dominators(f)
	children := make([][]int, len(f.Blocks))
	for b, p := range dom.idom {
		if p >= 0 && p != b {
			children[p] = append(children[p], b)
		}
	}
	rename := map[Reg]Reg{}
	resolve := func(r Reg) Reg {
		for n := 0; n < len(f.Regs); n++ {
			s, ok := rename[r]
			if !ok {
				break
			}
			r = s
		}
		return r
	}
	inScope := make([]bool, len(f.Regs))
	var scoped []Reg // registers put in scope, in order, to take out again
	visit := func(b *Block) {
		// Results are reused only within cseWindow instructions of one
		// block: reusing one from further away keeps it live across the
		// code between, which ptxas's own rematerialisation then does not
		// always undo (six more registers for MatMul32 on sm_90 across
		// blocks, for bwdk.QF16 with no window). Copies are propagated from
		// anywhere dominating.
		avail := map[string]Reg{}
		availAt := map[string]int{}
		out := b.Instrs[:0]
		for _, in := range b.Instrs {
			renameOperands(in, resolve)
			d, ok := soleDest(in)
			if !ok || defs[d] != 1 {
				out = append(out, in)
				continue
			}
			if key, ok := cseKey(f, in, defs, inScope); ok {
				if e, hit := avail[key]; hit && f.Regs[e] == f.Regs[d] && len(out)-availAt[key] <= cseWindow {
					rename[d] = e
					continue
				}
				avail[key] = d
				availAt[key] = len(out)
			}
			if in.Op == OpMov && in.Args[1].Kind == KReg {
				if r := in.Args[1].Reg; defs[r] == 1 && inScope[r] && f.Regs[r] == f.Regs[d] {
					rename[d] = r
					continue
				}
			}
			inScope[d] = true
			scoped = append(scoped, d)
			out = append(out, in)
		}
		b.Instrs = out
	}
	// Preorder over the dominator tree; each frame remembers how many
	// registers were in scope when its subtree began.
	type frame struct{ b, next, mark int }
	stack := []frame{{0, 0, 0}}
	visit(f.Blocks[0])
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(children[top.b]) {
			c := children[top.b][top.next]
			top.next++
			stack = append(stack, frame{c, 0, len(scoped)})
			visit(f.Blocks[c])
			continue
		}
		for len(scoped) > top.mark {
			inScope[scoped[len(scoped)-1]] = false
			scoped = scoped[:len(scoped)-1]
		}
		stack = stack[:len(stack)-1]
	}
	// Uses outside the replaced instruction's dominance region read an
	// undefined register either way; rename them too, so none is left
	// naming a register nothing defines any more.
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			renameOperands(in, resolve)
		}
	}
}

// cseWindow is how many instructions back eliminateCommonSubexprs looks
// for an identical one; see there.
const cseWindow = 8

// renameOperands applies resolve to every register in reads a register
// from (its destination included, which resolve leaves alone for any
// register still defined).
func renameOperands(in *Instr, resolve func(Reg) Reg) {
	if in.Guarded {
		in.Guard = resolve(in.Guard)
	}
	for i := range in.Args {
		a := &in.Args[i]
		switch a.Kind {
		case KReg:
			a.Reg = resolve(a.Reg)
		case KAddr:
			if a.Sym == "" {
				a.Reg = resolve(a.Reg)
			}
			if len(a.Vec) > 0 { // a tensor address's coordinates
				v := make([]Reg, len(a.Vec))
				for j, r := range a.Vec {
					v[j] = resolve(r)
				}
				a.Vec = v
			}
		case KVec:
			v := make([]Reg, len(a.Vec))
			for j, r := range a.Vec {
				v[j] = resolve(r)
			}
			a.Vec = v
		}
	}
}

// cseKey spells a pure instruction's operation and sources, or reports
// that it may not be merged: an operand register defined more than once
// or not at a dominating point, a memory or vector operand, or a special
// register whose value may change while the thread runs (clocks, timers,
// and %warpid and %smid, which PTX says a preempted thread may see change).
func cseKey(f *Func, in *Instr, defs []int, inScope []bool) (string, bool) {
	if !pureOps[in.Op] {
		return "", false
	}
	key := in.Text
	for _, a := range in.Args[1:] {
		switch a.Kind {
		case KReg:
			if defs[a.Reg] != 1 || !inScope[a.Reg] {
				return "", false
			}
			key += fmt.Sprintf(" r%d", a.Reg)
		case KImm:
			key += fmt.Sprintf(" i%s:%x", a.Type, a.Imm)
		case KSym:
			key += fmt.Sprintf(" s%s+%d", a.Sym, a.Off)
		case KSpecial:
			if strings.Contains(a.Sym, "clock") || strings.Contains(a.Sym, "timer") || strings.Contains(a.Sym, "warpid") || strings.Contains(a.Sym, "smid") {
				return "", false
			}
			key += " " + a.Sym
		default:
			return "", false
		}
	}
	return key, true
}
