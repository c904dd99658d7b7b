package compiler

// 32-bit row indices for global addressing.
//
// A tile kernel's row `r0 + r` (blockIdx·32 plus a thread's row in the
// tile) is an int, so it is a 64-bit add, and so are the guard `r0+r < m`
// and the index `(r0+r)*k + c` built from it: ptxas computes the high half
// of the sum (an IMAD.WIDE and an add with carry per unrolled copy), and
// the multiply by k as a full 64×64 product. When the range analysis
// bounds both operands to [0, 2³²) and the sum to [0, 2³¹), the sum is
// computed in 32 bits and zero-extended: exact, and ptxas then knows the
// high half is zero (ISETP.EX against RZ, IMAD.WIDE.U32 with one IMAD for
// the product's high half).
//
// Only for a sum used by comparisons and multiplications by a run-time
// value (a row stride), at least one of each, and nothing else: a sum that goes on into shared-memory
// index arithmetic, such as `(ty+8·i)·32 + kk`, stays 64-bit, because
// ptxas no longer sees neighbouring shared loads as adjacent through a
// zero-extension (no LDS.128; docs/performance.md, "MatMul32's guarded
// loads"). And only outside loops (an unrolled loop's copies are not one):
// in transpose's tile loops and MatMul32's K loop the narrowed rows cost
// ptxas 13.5 six registers on sm_90 (Transpose* 24 → 30), past issue 8's
// rule.

import (
	"go/token"
	"math"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// narrowAdd lowers in, x + y, as described above, or returns false.
func (kb *kernelBuilder) narrowAdd(fr *frame, in *ssa.BinOp, st ir.Type, a, b ir.Operand) (ir.Operand, bool) {
	if in.Op != token.ADD || fr.ranges == nil || st != ir.S64 || !fr.narrowable(in) {
		return ir.Operand{}, false
	}
	for _, v := range []ssa.Value{in.X, in.Y} {
		if r := fr.ranges.rangeAt(v, in.Block()); !r.ok || r.lo < 0 || r.hi > math.MaxUint32 {
			return ir.Operand{}, false
		}
	}
	if r := fr.ranges.rangeAt(in, in.Block()); !r.ok || r.lo < 0 || r.hi > math.MaxInt32 {
		return ir.Operand{}, false
	}
	low := func(o ir.Operand) ir.Operand {
		if o.Kind == ir.KImm {
			return ir.Imm(ir.U32, o.Imm&math.MaxUint32)
		}
		r := kb.b.New(ir.U32)
		kb.b.Cvt(ir.U32, ir.U64, "", r, ir.R(kb.reg(o, st)))
		return ir.R(r)
	}
	s32 := kb.b.New(ir.U32)
	kb.b.Arith(ir.OpAdd, ir.U32, s32, low(a), low(b))
	s64 := kb.b.New(ir.S64)
	kb.b.Cvt(ir.U64, ir.U32, "", s64, ir.R(s32))
	return ir.R(s64), true
}

// rowUses reports whether v is used only by comparisons and by
// multiplications with a non-constant, and by at least one of each: a
// guarded row, `if row < m { ... row*k ... }`. Sums only multiplied (the
// row offsets of ops/internal/decodek's and attnk's tiles) stay 64-bit:
// narrowed, ptxas 13.5 kept more of them live, decodek PagedBF16D256
// taking 167 registers where its baseline is 110.
func rowUses(v ssa.Value, both bool) bool {
	refs := v.Referrers()
	if refs == nil {
		return false
	}
	cmp, mul := false, false
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.DebugRef:
			continue
		case *ssa.BinOp:
			switch r.Op {
			case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
				cmp = true
			case token.MUL:
				other := r.X
				if other == v {
					other = r.Y
				}
				if _, p := other.(*ssa.Parameter); !p || !globalIndex(r, 0) {
					return false // a row stride is a kernel parameter
				}
				mul = true
			default:
				return false
			}
		default:
			return false
		}
	}
	if both {
		return cmp && mul
	}
	return cmp || mul
}

// inRealLoop reports whether b belongs to a loop that is not unrolled
// (//kern:unroll copies are straight-line code).
func (fr *frame) inRealLoop(b *ssa.BasicBlock) bool {
	if fr.loopy == nil {
		fr.loopy = map[*ssa.BasicBlock]bool{}
		for _, h := range fr.fn.Blocks {
			if fr.unrolled[h] != nil {
				continue
			}
			for _, p := range h.Preds {
				if h.Dominates(p) {
					for lb := range loopBlocks(h, p) {
						fr.loopy[lb] = true
					}
				}
			}
		}
	}
	return fr.loopy[b]
}

// narrowable: in an unrolled copy, a sum used only by comparisons and
// products (MatMul32's tile rows, one SSA value for the guard and one for
// the index); elsewhere outside loops, one used by both.
func (fr *frame) narrowable(in *ssa.BinOp) bool {
	if fr.ret != nil {
		return false // an inlined helper's parameters are not the kernel's
	}
	for _, l := range fr.unrolled {
		if l.blocks[in.Block()] {
			return rowUses(in, false)
		}
	}
	return !fr.inRealLoop(in.Block()) && rowUses(in, true)
}

// globalIndex reports whether v only goes, through additions, into
// indices of the kernel's slice parameters (global memory): a product
// that indexes shared memory, as decodek's (warp·G+g)·hd into its
// reduction tile, stays 64-bit (narrowed there, decodek PagedBF16D256 took
// 167 registers, baseline 110).
func globalIndex(v ssa.Value, depth int) bool {
	refs := v.Referrers()
	if refs == nil || depth > 4 {
		return false
	}
	n := 0
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.DebugRef:
			continue
		case *ssa.BinOp:
			if r.Op != token.ADD || !globalIndex(r, depth+1) {
				return false
			}
		case *ssa.IndexAddr:
			if _, p := r.X.(*ssa.Parameter); !p || r.Index != v {
				return false
			}
		default:
			return false
		}
		n++
	}
	return n > 0
}

// sharedIndex reports whether v only goes, through +, −, · and <<, into
// indices of shared-memory tiles (gpu.Shared, gpu.DynShared). Such sums
// stay 64-bit in a 32-bit entry too (narrowArith): a 32-bit `x + kk`
// zero-extended hides from ptxas that the address is the one of x plus
// 4·kk, so each of an unrolled loop's shared loads gets its own add and
// neighbouring ones are not merged (MatMul32_i32's K tile: 577 SASS on
// sm_80 against 340 for the 64-bit entry, ptxas 12.4).
func sharedIndex(v ssa.Value, depth int) bool {
	refs := v.Referrers()
	if refs == nil || depth > 6 {
		return false
	}
	n := 0
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.DebugRef:
			continue
		case *ssa.BinOp:
			switch r.Op {
			case token.ADD, token.SUB, token.MUL, token.SHL:
			default:
				return false
			}
			if !sharedIndex(r, depth+1) {
				return false
			}
		case *ssa.IndexAddr:
			if r.Index != v || !isSharedTile(r.X) {
				return false
			}
		default:
			return false
		}
		n++
	}
	return n > 0
}

// isSharedTile reports whether s is the result of gpu.Shared or
// gpu.DynShared.
func isSharedTile(s ssa.Value) bool {
	c, ok := s.(*ssa.Call)
	if !ok {
		return false
	}
	fn := c.Call.StaticCallee()
	if fn == nil {
		return false
	}
	name, ok := gpuIntrinsicName(fn)
	return ok && (name == "Shared" || name == "DynShared")
}
