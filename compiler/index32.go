package compiler

// The 32-bit entry of an idx32 kernel (//kern:kernel ... idx32).
//
// Go's int is 64 bits, so a kernel's index arithmetic is 64-bit unless the
// range analysis bounds its operands: r*cols + c with int rows and cols
// costs a 64-bit multiply (three IMADs and an add) and each compare of two
// ints two ISETPs, where clang's int twin does one of each. No static
// proof can bound a parameter, but most launches have small ones. An
// idx32 kernel is compiled twice into the same module: its entry as
// always, and <entry>_i32, compiled assuming what the launch checks
// before it picks that entry (package kern, index32.go, the same rule):
//
//   - every slice argument has fewer than 2³¹ elements (len ≤ 2³¹−1);
//   - every 64-bit integer scalar argument (int, int64, uint, uint64,
//     uintptr) lies in int32's range, [−2³¹, 2³¹−1] ([0, 2³¹−1] unsigned);
//   - the grid has at most 2³¹ / B blocks along x, B the block= extent
//     along x (1024 without a directive), so t.GlobalX() < 2³¹; y and z
//     are small on every GPU (65535 blocks of at most 1024 threads).
//
// The assumptions only tighten the intervals of ranges.go; everything the
// kernel computes keeps Go's 64-bit semantics, because the lowering
// narrows an operation only where the intervals prove the narrow one
// exact: comparisons of values in int32's range compare the low halves
// (narrowCompare), products of two such values are one mul.wide.s32
// (narrowMul), and divisions divide in 32 bits (lowerDivRem). A check
// that can still fail fails with the same site, index and length, so
// the two entries differ in speed only. Native mode has one function;
// the emulator runs whichever entry the launch picks.
//
// The 32-bit entry may also leave out checks that facts about the
// launch's arguments prove (launchfact.go: len(in) ≥ rows·cols for a
// guarded in[r*cols+c]); the launch then also tests those facts, so the
// kernel's entry, which keeps every check, runs wherever one fails.
//
// The second entry shares its kernel's index in the error slot's site
// code, and its sites are looked up in the first entry's list (addSite),
// so the host decodes a fault of either entry with one KernelSpec.

import (
	"math"

	"github.com/gokern/kern/compiler/ir"
)

// idx32Len bounds a slice's length in a 32-bit entry.
const idx32Len = math.MaxInt32

// idx32Suffix names a kernel's 32-bit entry: Entry + idx32Suffix.
const idx32Suffix = "_i32"

// idx32Grid is the grid a 32-bit entry runs under, per dimension: along x
// at most 2³¹ / bx blocks (bx the block's largest x extent), so that
// BlockIdx().X·bx + ThreadIdx().X < 2³¹; y and z as on every GPU.
func idx32Grid(bx int64) [3]int64 {
	return [3]int64{(1 << 31) / bx, gridDim[1], gridDim[2]}
}

// idx32Reg is what a 32-bit entry assumes of a kernel parameter's
// register: an int scalar's or a slice length's (unknown in the first
// entry, or for any other register).
func (kb *kernelBuilder) idx32Reg(o ir.Operand) interval {
	if r, ok := kb.narrowRegs[o.Reg]; ok {
		return r
	}
	return unknown
}

// noteIdx32Param records, in a 32-bit entry, the launch's bound on a
// parameter's register: a slice's length (sliceLen) or a 64-bit integer
// scalar of type st.
func (kb *kernelBuilder) noteIdx32Param(r ir.Reg, st ir.Type, sliceLen bool) {
	if !kb.idx32 {
		return
	}
	switch {
	case sliceLen:
		kb.narrowRegs[r] = span(0, idx32Len)
	case st == ir.S64:
		kb.narrowRegs[r] = span(math.MinInt32, math.MaxInt32)
	case st == ir.U64:
		kb.narrowRegs[r] = span(0, math.MaxInt32)
	}
}

// addSite records bounds-check sites described by descs (consecutive
// site numbers) and returns the first one's number. A 32-bit entry
// reuses its first entry's numbers: a site of the same description (the
// same Go position) reports the same thing.
func (kb *kernelBuilder) addSite(descs ...string) int {
	if kb.idx32 {
	search:
		for i := 0; i+len(descs) <= len(kb.k.Sites); i++ {
			for j, d := range descs {
				if kb.k.Sites[i+j] != d {
					continue search
				}
			}
			return i
		}
	}
	i := len(kb.k.Sites)
	kb.k.Sites = append(kb.k.Sites, descs...)
	return i
}

// addOffset32 returns, in a 32-bit entry with bounds checks, the address
// of element i of the global slice x as base + mul.wide.u32(i, size): i
// passed its check (or was proven, or hoisted), so 0 ≤ i < len(x) < 2³¹
// and its low half is i. ptxas makes that one IMAD.WIDE.U32 with the
// base as addend, where the 64-bit i·size + base is a LEA and a LEA.HI.X.
func (kb *kernelBuilder) addOffset32(x *val, i ir.Operand, size int64) (ir.Operand, bool) {
	if !kb.idx32 || !kb.bounds || x.space != ir.Global || len(x.ops) != 3 || i.Kind != ir.KReg {
		return ir.Operand{}, false
	}
	off, r := kb.b.New(ir.U64), kb.b.New(ir.U64)
	kb.b.MulWide(ir.U32, off, kb.low32(i, ir.S64), ir.Imm(ir.U32, uint64(size)))
	kb.b.Arith(ir.OpAdd, ir.S64, r, x.ops[0], ir.R(off))
	return ir.R(r), true
}

// limit32 computes, in a 32-bit entry, a hoisted loop's limit
// (emitHoistEntry) in 32 bits, reporting whether it did. It applies when
// the loop starts at a small constant iv0, its bound lies in int32's
// range, every group tests its first index (not nonNeg) and has
// iv0 + cmin − cmax ≤ 0 (true of a loop from 0): a group whose
// first index passes that test, 0 ≤ iv0+b+cmin < len ≤ 2³¹−1, has
// len−b−cmax = (len − first) + iv0 + cmin − cmax in int32's range, so its
// low half is exact; a group that fails it contributes iv0. The limit is
// then the minimum of int32 values, sign-extended: the same as the 64-bit
// one.
func (kb *kernelBuilder) limit32(fr *frame, pl *hoistLoop, iv0, bound ir.Operand) bool {
	const small = 1 << 20
	if !kb.idx32 || fr.ranges == nil || iv0.Kind != ir.KImm || int64(iv0.Imm) < -small || int64(iv0.Imm) > small {
		return false
	}
	if r := fr.ranges.rangeAt(pl.bound, pl.entry); !r.ok || r.lo < math.MinInt32 || r.hi > math.MaxInt32 {
		return false
	}
	for _, g := range pl.groups {
		// iv0 + cmin − cmax ≤ 0 keeps len−b−cmax ≤ len − first < 2³¹.
		if g.proven {
			continue
		}
		if g.nonNeg || g.cmin < -small || g.cmax > small || int64(iv0.Imm)+g.cmin-g.cmax > 0 {
			return false
		}
	}
	lim := kb.b.New(ir.S32)
	kb.b.Mov(ir.S32, lim, kb.low32(bound, ir.S64))
	kb.emitProvenPointers(fr, pl, iv0)
	for _, g := range pl.groups {
		if g.proven {
			continue
		}
		base := kb.emitBase(fr, pl, g)
		n := kb.value(fr, g.x).ops[1]
		first := kb.add64(kb.add64(base, ir.Imm(ir.S64, uint64(g.cmin))), iv0)
		ok := kb.b.New(ir.Pred)
		kb.b.Setp(ir.LO, ir.U64, ok, ir.R(kb.reg(first, ir.S64)), n)
		last := kb.b.New(ir.S32)
		kb.b.Arith(ir.OpSub, ir.S32, last, kb.low32(n, ir.S64), kb.low32(kb.add64(base, ir.Imm(ir.S64, uint64(g.cmax))), ir.S64))
		kb.b.Selp(ir.S32, last, ir.R(last), ir.Imm(ir.S32, iv0.Imm&math.MaxUint32), ok)
		kb.b.Arith(ir.OpMin, ir.S32, lim, ir.R(lim), ir.R(last))
		kb.emitHoistPointer(fr, g, base, iv0)
	}
	kb.b.Cvt(ir.S64, ir.S32, "", pl.limit, ir.R(lim))
	return true
}
