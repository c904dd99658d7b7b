package compiler

// Bounds checks lifted above their guard.
//
// An edge-tile load `if g { v = a[i] }`, g being `r < m && c < n` and i
// r*n+c, whose check stays is a branch inside a branch: the block g
// enters computes i, tests i against len(a) and branches to the failure
// path, so ptxas keeps the guarded block as a divergent region
// (BSSY/BSYNC, a branch around it and a move of the default value)
// instead of predicating the load. When that block is entered only from
// the test of g and begins with arithmetic (no memory access, division,
// variable shift or call but len; reads of a local array kept in
// registers at a constant index, as an unrolled epilogue's
// `c[row*n+col] = acc[i]` makes, count as arithmetic) leading to the
// indexing, the arithmetic and the check are lowered before the branch on
// g, the check becoming
//
//	if g && !(0 ≤ i < len(a)) { report the site, i and len(a) }
//
// so what is left under g is the address and the load, which ptxas
// predicates (@P LDG). Exact: the lifted arithmetic is pure and cannot
// fault, so computing it when g is false changes nothing, and the check
// fails for exactly the same threads, sites, indices and lengths as
// before. A thread with g false never reaches the report.
//
// A load from shared memory through a proven index (and its indexing)
// may stand between the arithmetic and the checked indexing, as in a
// transpose's `out[r*rows+c] = s[tx*33+ty+k]`, where go/ssa loads s
// before it indexes out: it cannot fault, so the check lifted past it
// fails where it did, and it stays under g with the store (liftablePrefix).
// ptxas 13.5 then keeps 28 registers for the tiled transposes of
// examples/transpose and internal/conformance on sm_90 (24 before; issue
// 8's rule allows 28), for 17 SASS less (TransposePadded, sm_90).
//
// Applied to the edge-tile shape only: a guard of two or more tests
// merged into one predicate (condmerge.go) over a block that does the
// access and goes on to the join. Lifting under single-test guards too
// (bwdk's `if d < hd` loads of a row) let ptxas keep more loads in
// flight and cost ops/internal/bwdk KVBF16 7 registers on sm_90, and
// lifting into blocks that test again (mm's Simple fragment loads) 6;
// issue 8's rule allows 4.
//
// The address stays under g: computed above it as well, ptxas issued
// MatMul32's eight tile loads with their 64-bit addresses all live, and
// MatMul32 sm_90 took 52 registers (ptxas 13.5) where issue 8's rule
// allows 44; with the address under g it takes 40, at 11 more SASS per K
// tile on sm_90 (docs/performance.md, "MatMul32's guarded loads").

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// liftChecks lowers the lifted prefix of tt, the block entered from the
// current one when cond holds and which then goes on to join, where the
// guard's false edge goes, into the current block: its arithmetic, and
// for each checked indexing in it the check and-ed with cond. The
// indexings themselves (their address arithmetic) stay in tt, which
// lowers them without a check; the lifted instructions are marked so that
// lowering tt skips them.
func (kb *kernelBuilder) liftChecks(fr *frame, tt, join *ssa.BasicBlock, cond ir.Reg) {
	if kb.cfg.KeepChecks || !kb.bounds || len(tt.Preds) != 1 || hasPhis(tt) || fr.merged[tt] {
		return
	}
	if len(tt.Succs) != 1 || tt.Succs[0] != join {
		return // more than the access under the guard: an else, or more tests
	}
	if fr.unrolled[tt] != nil || fr.partial[tt] != nil || fr.hoists[tt] != nil {
		return
	}
	prefix := kb.liftablePrefix(fr, tt)
	if prefix == nil {
		return
	}
	if fr.lifted == nil {
		fr.lifted = map[ssa.Instruction]bool{}
		fr.checkedAbove = map[*ssa.IndexAddr]bool{}
	}
	savedPos := kb.b.Pos
	for _, instr := range prefix {
		kb.b.Pos = instr.Pos()
		if ia, ok := instr.(*ssa.IndexAddr); ok && !kb.registerRead(fr, ia) {
			x := kb.value(fr, ia.X)
			var i64 ir.Operand
			if j, ok := kb.guardIV(fr, ia); ok {
				i64 = j
				if fr.ivOf == nil {
					fr.ivOf = map[*ssa.IndexAddr]ir.Operand{}
				}
				fr.ivOf[ia] = j
			} else {
				i64 = kb.index64(kb.value(fr, ia.Index).ops[0], ia.Index.Type())
			}
			kb.guardedCheck(i64, x.ops[1], cond, ia)
			fr.checkedAbove[ia] = true
			continue
		}
		fr.lifted[instr] = true
		kb.lowerInstr(fr, instr)
	}
	kb.b.Pos = savedPos
}

// liftablePrefix returns the instructions of b up to and including its
// last checked slice indexing that only speculatable instructions and
// other such indexings precede, or nil when there is none. A register
// read of a local array (registerRead) counts as arithmetic. A load
// through a proven index of a shared array (which cannot fault), its
// indexing and arithmetic on the loaded value may come between: they
// stay in b, and what is lifted must not use them, so the checks lifted
// past them fail where they did.
func (kb *kernelBuilder) liftablePrefix(fr *frame, b *ssa.BasicBlock) []ssa.Instruction {
	for _, instr := range b.Instrs {
		if fr.groups[instr] != nil {
			return nil // vecmerge.go lowers the group's accesses together
		}
	}
	var out []ssa.Instruction
	end, n := -1, 0
	left := map[ssa.Value]bool{} // values of the loads left in b
	uses := func(instr ssa.Instruction) bool {
		for _, op := range instr.Operands(nil) {
			if *op != nil && left[*op] {
				return true
			}
		}
		return false
	}
	for _, instr := range b.Instrs {
		if in, ok := instr.(*ssa.UnOp); ok && in.Op == token.MUL && left[in.X] {
			left[in] = true // a load through a no-fault indexing
			continue
		}
		if uses(instr) {
			v, ok := instr.(ssa.Value)
			if !ok || !speculatableInstr(instr) {
				return cutList(out, end)
			}
			left[v] = true // arithmetic on such a load stays with it
			continue
		}
		switch in := instr.(type) {
		case *ssa.DebugRef:
			continue
		case *ssa.IndexAddr:
			if kb.registerRead(fr, in) {
				out = append(out, instr)
				continue
			}
			if fr.safe[in] && noFaultLoad(fr, in) {
				left[in] = true
				continue
			}
			if _, ok := in.X.Type().Underlying().(*types.Slice); !ok || fr.safe[in] || fr.hoisted[in] != nil || fr.pairs[in] != nil {
				return cutList(out, end)
			}
			out = append(out, instr)
			end = len(out) - 1
			continue
		}
		if !speculatableInstr(instr) && !kb.registerRead(fr, instr) {
			return cutList(out, end)
		}
		if n++; n > maxSpeculated {
			return cutList(out, end)
		}
		out = append(out, instr)
	}
	return cutList(out, end)
}

// noFaultLoad reports whether ia, a proven indexing, addresses shared
// memory (pointerSpaces): loading through it cannot fault.
func noFaultLoad(fr *frame, ia *ssa.IndexAddr) bool {
	pi, ok := fr.spaces[ia]
	if !ok {
		pi, ok = fr.spaces[ia.X]
	}
	return ok && pi.set && pi.space == ir.Shared
}

func cutList(out []ssa.Instruction, end int) []ssa.Instruction {
	if end < 0 {
		return nil
	}
	return out[:end+1]
}

// registerRead reports whether instr addresses or reads an element of a
// local array kept in registers at an index constant in this copy and in
// range, which cannot fault: the stored value of `c[i] = acc[r]` in an
// unrolled epilogue, which go/ssa reads before computing c's index.
func (kb *kernelBuilder) registerRead(fr *frame, instr ssa.Instruction) bool {
	var ia *ssa.IndexAddr
	switch in := instr.(type) {
	case *ssa.IndexAddr:
		ia = in
	case *ssa.UnOp:
		ia, _ = in.X.(*ssa.IndexAddr)
		if in.Op != token.MUL {
			return false
		}
	}
	if ia == nil {
		return false
	}
	a, ok := ia.X.(*ssa.Alloc)
	if !ok || !fr.promoted[a] {
		return false
	}
	arr, ok := a.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Array)
	if !ok || !basicNumeric(arr.Elem()) {
		return false
	}
	i := kb.value(fr, ia.Index).ops[0]
	if i.Kind != ir.KImm {
		return false
	}
	k := int64(signExtend(i.Imm, scalarType(ia.Index.Type())))
	return k >= 0 && k < arr.Len()
}

func cut(b *ssa.BasicBlock, end int) []ssa.Instruction {
	if end < 0 {
		return nil
	}
	return b.Instrs[:end+1]
}

// guardedCheck emits the check of ia, index i64 and length n, failing
// only where guard holds.
func (kb *kernelBuilder) guardedCheck(i64, n ir.Operand, guard ir.Reg, ia *ssa.IndexAddr) {
	if i64.Kind == ir.KImm && n.Kind == ir.KImm && i64.Imm < n.Imm {
		kb.noteCheck(ia.Pos(), false)
		return
	}
	kb.noteCheck(ia.Pos(), true)
	if i64.Kind == ir.KImm {
		i64 = ir.R(kb.reg(i64, ir.S64))
	}
	oob := kb.b.New(ir.Pred)
	kb.b.Setp(ir.HS, ir.U64, oob, i64, n)
	p := kb.b.New(ir.Pred)
	kb.b.Arith(ir.OpAnd, ir.Pred, p, ir.R(oob), ir.R(guard))
	kb.failWhen(p, "oob", kb.posString(ia.Pos()), i64, n)
}
