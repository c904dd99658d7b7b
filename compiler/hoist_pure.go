package compiler

// Pure hoisted loops: the fault decided on the entry edge.
//
// A hoisted loop (hoist.go) runs while iv < limit and, leaving with
// iv < N, reports the access that iteration would fault on. When nothing
// the loop does can be observed (it only loads through hoisted or proven
// indices, computes, writes locals and runs mma), the iterations before a
// fault change nothing anyone can see: the thread stops at the fault with
// the same report either way. Then the entry edge computes the iteration
// that faults,
//
//	first = iv0 + roundup(max(limit, iv0) − iv0, s)   // s a power of two
//
// the smallest iv0 + j·s ≥ limit, and if first < N goes straight to the
// cold block with iv = first; every iteration the loop then runs is in
// range, and its test is the source's iv < N. What that buys: N is often
// a kernel parameter, and ptxas unrolls a counted loop whose bound is one
// (MatMulMMA's k loop ×4, with each iteration's loads ahead of the last
// one's mma), which it does not for a computed min(N, …). The cold block
// and its report are unchanged: the same site, index and length as the
// per-iteration check.
//
// Exact because the loop has a single exit (the header's test) and no
// instruction that can fault or be observed: no stores but to locals, no
// kept checks, no division, no barrier, atomics or channel operations,
// and calls only to pure intrinsics, pure helpers (pureHelper) and the
// warp-level mma, which only reads registers (a fault in one lane leaves
// its warp's later mma short of that lane either way). first cannot
// wrap: limit and iv0 stay below 2⁵⁰ (hoist.go).

import (
	"go/token"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// mmaCalls are the warp-level matrix products a pure loop may run.
var mmaCalls = map[string]bool{"MMAF16": true, "MMABF16": true, "MMAS8": true}

// pureLoop reports whether the loop of pl, whose body block is body, is
// pure in the sense above, with a constant power-of-two step.
func (pl *hoistLoop) pureLoop(fr *frame, body *ssa.BasicBlock) bool {
	if s, ok := constInt(pl.step); !ok || s <= 0 || s&(s-1) != 0 || s > hoistLimit {
		return false
	}
	if len(pl.inLoop) != 2 || len(body.Succs) != 1 || body.Succs[0] != pl.header {
		return false
	}
	hoisted := map[*ssa.IndexAddr]bool{}
	for _, a := range pl.access {
		hoisted[a.ia] = true
	}
	for _, instr := range body.Instrs {
		switch in := instr.(type) {
		case *ssa.IndexAddr:
			if !fr.safe[in] && !hoisted[in] {
				return false
			}
		case *ssa.DebugRef, *ssa.Convert, *ssa.ChangeType, *ssa.Field, *ssa.Extract, *ssa.FieldAddr, *ssa.Jump:
		case *ssa.Alloc:
			if in.Heap {
				return false
			}
		case *ssa.UnOp:
			if in.Op == token.ARROW {
				return false
			}
		case *ssa.BinOp:
			if !harmlessBinOp(in) {
				return false
			}
		case *ssa.Store:
			if !localAddr(in.Addr) {
				return false
			}
		case *ssa.Call:
			if !pureCall(in) && !mmaCall(in) && !pureHelper(in, 0) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// pureHelper reports whether c calls a helper that computes a value and
// nothing else: one block (no loop, so it returns), whose instructions
// the rules above allow but for slice indexing and loads through a
// pointer other than to its locals (either could fault or read what the
// loop's checks do not cover), and whose calls are pure intrinsics or
// such helpers in turn.
// The weight codecs' load (qwen3 matmulWarp: c.load(w[i])) is one; with
// it the loop is pure and ptxas tests a parameter bound (sm_80 26 → 24
// registers, ptxas 13.5).
func pureHelper(c *ssa.Call, depth int) bool {
	fn := c.Call.StaticCallee()
	if fn == nil || depth > 3 || len(fn.Blocks) != 1 {
		return false
	}
	if _, intrinsic := gpuIntrinsicName(fn); intrinsic {
		return false // a gpu intrinsic pureCall did not accept
	}
	for _, instr := range fn.Blocks[0].Instrs {
		switch in := instr.(type) {
		case *ssa.DebugRef, *ssa.Convert, *ssa.ChangeType, *ssa.Field, *ssa.FieldAddr, *ssa.Extract, *ssa.Return:
		case *ssa.Alloc: // a receiver or parameter go/ssa spills to a local
			if in.Heap {
				return false
			}
		case *ssa.Store:
			if !localAddr(in.Addr) {
				return false
			}
		case *ssa.UnOp:
			if in.Op == token.ARROW || in.Op == token.MUL && !localAddr(in.X) {
				return false
			}
		case *ssa.BinOp:
			if !harmlessBinOp(in) {
				return false
			}
		case *ssa.Call:
			if !pureCall(in) && !pureHelper(in, depth+1) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func mmaCall(c *ssa.Call) bool {
	fn := c.Call.StaticCallee()
	if fn == nil {
		return false
	}
	name, ok := gpuIntrinsicName(fn)
	return ok && mmaCalls[name]
}

// hoistCold returns the loop's cold block, allocating it on first use.
func (kb *kernelBuilder) hoistCold(pl *hoistLoop) *ir.Block {
	if pl.cold == nil {
		pl.cold = kb.f.NewBlock("hoisted_fault")
	}
	return pl.cold
}

// emitPureEntry ends the entry edge of a pure loop: with first (above)
// below N, iv = first and on to the cold block.
func (kb *kernelBuilder) emitPureEntry(fr *frame, pl *hoistLoop, iv0, bound ir.Operand) {
	s, _ := constInt(pl.step)
	d := kb.b.New(ir.S64)
	if iv0.Kind == ir.KImm && iv0.Imm == 0 {
		kb.b.Arith(ir.OpMax, ir.S64, d, ir.R(pl.limit), ir.Imm(ir.S64, 0))
	} else {
		kb.b.Arith(ir.OpSub, ir.S64, d, ir.R(pl.limit), iv0)
		kb.b.Arith(ir.OpMax, ir.S64, d, ir.R(d), ir.Imm(ir.S64, 0))
	}
	if s > 1 {
		kb.b.Arith(ir.OpAdd, ir.S64, d, ir.R(d), ir.Imm(ir.S64, uint64(s-1)))
		kb.b.Arith(ir.OpAnd, ir.B64, d, ir.R(d), ir.Imm(ir.S64, uint64(-s)))
	}
	first := kb.add64(ir.R(d), iv0)
	p := kb.b.New(ir.Pred)
	kb.b.Setp(ir.LT, ir.S64, p, first, bound)
	early := kb.f.NewBlock("hoisted_early")
	kb.b.BraIf(p, false, early)
	saved := kb.b.B
	kb.b.B = early
	kb.b.Mov(ir.S64, kb.reg(kb.phiVal(fr, pl.iv).ops[0], ir.S64), first)
	kb.advanceColdPointers(pl, ir.R(d))
	kb.b.Bra(kb.hoistCold(pl))
	kb.b.B = saved
}
