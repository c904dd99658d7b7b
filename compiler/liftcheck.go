package compiler

// Bounds checks lifted above their guard.
//
// An edge-tile load `if g { v = a[i] }` whose check stays is a branch
// inside a branch: the block g enters computes i, tests i against len(a)
// and branches to the failure path, so ptxas keeps the guarded block as a
// divergent region (BSSY/BSYNC, a branch around it and a move of the
// default value) instead of predicating the load. When that block is
// entered only from the test of g and begins with arithmetic (no memory
// access, division, variable shift or call but len) leading to the
// indexing, the arithmetic and the indexing are lowered before the branch
// on g, and the check becomes
//
//	if g && !(0 ≤ i < len(a)) { report the site, i and len(a) }
//
// so what is left under g is the load, which ptxas predicates
// (@P LDG). Exact: the lifted arithmetic is pure and cannot fault, so
// computing it when g is false changes nothing, and the check fails for
// exactly the same threads, sites, indices and lengths as before. A thread
// with g false never reaches the report.
//
// Off by default (Config.LiftChecks): it takes MatMul32's K tile from 392
// to 355 SASS (sm_80) and 411 to 366 (sm_90), ptxas 12.4, but with every
// load predicated ptxas issues the tile's eight loads back to back, and
// MatMul32 sm_90 needs 52 registers under ptxas 13.5 where issue 8's rule
// allows 44 (cmd/kern/testdata/registers.txt). Whether the loads in
// flight are worth the occupancy is for a GPU timing to decide
// (docs/performance.md, "MatMul32's guarded loads").

import (
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// liftChecks lowers the lifted prefix of tt, the block entered from the
// current one when cond holds, into the current block: its arithmetic and
// its first checked indexings, each check and-ed with cond. The lifted
// instructions are marked so that lowering tt skips them.
func (kb *kernelBuilder) liftChecks(fr *frame, tt *ssa.BasicBlock, cond ir.Reg) {
	if !kb.cfg.LiftChecks || kb.cfg.KeepChecks || !kb.bounds || len(tt.Preds) != 1 || hasPhis(tt) || fr.merged[tt] {
		return
	}
	if fr.unrolled[tt] != nil || fr.partial[tt] != nil || fr.hoists[tt] != nil {
		return
	}
	prefix := liftablePrefix(fr, tt)
	if prefix == nil {
		return
	}

	if fr.lifted == nil {
		fr.lifted = map[ssa.Instruction]bool{}
	}
	savedPos := kb.b.Pos
	for _, instr := range prefix {
		fr.lifted[instr] = true
		kb.b.Pos = instr.Pos()
		if ia, ok := instr.(*ssa.IndexAddr); ok {
			fr.vals[ia] = kb.liftedIndexAddr(fr, ia, cond)
			continue
		}
		kb.lowerInstr(fr, instr)
	}
	kb.b.Pos = savedPos
}

// liftablePrefix returns the instructions of b up to and including its
// last checked slice indexing that only speculatable instructions precede,
// or nil when there is none.
func liftablePrefix(fr *frame, b *ssa.BasicBlock) []ssa.Instruction {
	for _, instr := range b.Instrs {
		if fr.groups[instr] != nil {
			return nil // vecmerge.go lowers the group's accesses together
		}
	}
	end, n := -1, 0
	for i, instr := range b.Instrs {
		switch in := instr.(type) {
		case *ssa.DebugRef:
			continue
		case *ssa.IndexAddr:
			if _, ok := in.X.Type().Underlying().(*types.Slice); !ok || fr.safe[in] || fr.hoisted[in] != nil || fr.pairs[in] != nil {
				return cut(b, end)
			}
			end = i
			continue
		}
		if !speculatableInstr(instr) {
			return cut(b, end)
		}
		if n++; n > maxSpeculated {
			return cut(b, end)
		}
	}
	return cut(b, end)
}

func cut(b *ssa.BasicBlock, end int) []ssa.Instruction {
	if end < 0 {
		return nil
	}
	return b.Instrs[:end+1]
}

// liftedIndexAddr lowers a slice indexing whose check runs only when
// guard holds: the address, and the check folded with guard.
func (kb *kernelBuilder) liftedIndexAddr(fr *frame, ia *ssa.IndexAddr, guard ir.Reg) *val {
	x := kb.value(fr, ia.X)
	i64 := kb.index64(kb.value(fr, ia.Index).ops[0], ia.Index.Type())
	n := x.ops[1]
	if i64.Kind == ir.KImm && n.Kind == ir.KImm && i64.Imm < n.Imm {
		kb.noteCheck(ia.Pos(), false)
	} else {
		kb.guardedCheck(i64, n, guard, ia)
	}
	size := sizes.Sizeof(ia.X.Type().Underlying().(*types.Slice).Elem())
	return &val{ops: []ir.Operand{kb.addOffset(x.ops[0], i64, size)}, space: x.space, origin: x.origin, mask: x.mask}
}

// guardedCheck emits the check of ia, index i64 and length n, failing
// only where guard holds.
func (kb *kernelBuilder) guardedCheck(i64, n ir.Operand, guard ir.Reg, ia *ssa.IndexAddr) {
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
