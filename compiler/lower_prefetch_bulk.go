package compiler

// gpu.PrefetchL2Bulk(s, i, n): L2 prefetch of s[i:i+n] clamped to s
// (gpu/prefetch.go). The clamped range, exact for every int i and n:
//
//	lo  = max(i, 0)
//	cnt = min(max(n, 0) − (lo − i), len(s) − lo)   // elements; ≤ 0: none
//
// lo − i is in [0, 2⁶³] and max(n, 0) in [0, 2⁶³), so their s64
// difference is exact (2⁶³ wraps to −2⁶³, and the sum is right modulo
// 2⁶⁴, inside the s64 range); len(s) − lo ≥ −(2⁶³−1) is exact too. Where
// cnt > 0, lo < len(s), so the byte offset and length below are those of
// elements that exist and cannot overflow.
//
// sm_90 and newer: one cp.async.bulk.prefetch.L2.global (PTX ISA
// §9.7.9.25.4, PTX 8.0), whose address must be 16-byte aligned and size
// a multiple of 16: the range is widened to the 16-byte granules it
// touches, which lie in the allocation's own 256-byte-aligned granules
// (kern aligns every buffer to 256 bytes), and the u32 size is cut at
// 2³² − 16 bytes, a hint's prefix. The instruction is predicated on
// cnt > 0.
//
// Older targets: a loop over the 128-byte lines the range touches, one
// prefetch.global.L2 each (PTX ISA §9.7.9.15), skipped when cnt ≤ 0. An
// sm_80 module that a newer GPU runs forward keeps the loop: the sm_90
// comment form of internal/ptxpatch only adds instructions, and this one
// would also have to drop the loop.

import "github.com/gokern/kern/compiler/ir"

// bulkPrefetchVersion is the PTX ISA version (×10) that
// cp.async.bulk.prefetch needs.
const bulkPrefetchVersion = 80

func (kb *kernelBuilder) prefetchL2Bulk(c *icall) *val {
	if !kb.globalSlice(c) {
		return &val{origin: -1}
	}
	s := c.args[0]
	b := &kb.b
	i := kb.reg(kb.index64(c.arg(1), c.call.Call.Args[1].Type()), ir.S64)
	n := kb.reg(kb.index64(c.arg(2), c.call.Call.Args[2].Type()), ir.S64)
	lo, skip, n0, cnt, rest := b.New(ir.S64), b.New(ir.S64), b.New(ir.S64), b.New(ir.S64), b.New(ir.S64)
	b.Arith(ir.OpMax, ir.S64, lo, ir.R(i), ir.Imm(ir.S64, 0))
	b.Arith(ir.OpSub, ir.S64, skip, ir.R(lo), ir.R(i))
	b.Arith(ir.OpMax, ir.S64, n0, ir.R(n), ir.Imm(ir.S64, 0))
	b.Arith(ir.OpSub, ir.S64, cnt, ir.R(n0), ir.R(skip))
	b.Arith(ir.OpSub, ir.S64, rest, s.ops[1], ir.R(lo))
	b.Arith(ir.OpMin, ir.S64, cnt, ir.R(cnt), ir.R(rest))
	size := sizes.Sizeof(c.elem)
	start := kb.reg(kb.addOffset(s.ops[0], ir.R(lo), size), ir.U64)
	nbytes := kb.reg(kb.scaled(ir.R(cnt), size), ir.U64)
	if kb.tgt.sm >= 90 {
		kb.version = max(kb.version, bulkPrefetchVersion)
		a, e, tot, t32 := b.New(ir.U64), b.New(ir.U64), b.New(ir.U64), b.New(ir.U32)
		b.Arith(ir.OpAnd, ir.U64, a, ir.R(start), ir.Imm(ir.U64, ^uint64(15)))
		b.Arith(ir.OpAdd, ir.U64, e, ir.R(start), ir.R(nbytes))
		b.Arith(ir.OpAdd, ir.U64, e, ir.R(e), ir.Imm(ir.U64, 15))
		b.Arith(ir.OpAnd, ir.U64, e, ir.R(e), ir.Imm(ir.U64, ^uint64(15)))
		b.Arith(ir.OpSub, ir.U64, tot, ir.R(e), ir.R(a))
		b.Arith(ir.OpMin, ir.U64, tot, ir.R(tot), ir.Imm(ir.U64, 1<<32-16))
		b.Cvt(ir.U32, ir.U64, "", t32, ir.R(tot))
		p := b.New(ir.Pred)
		b.Setp(ir.GT, ir.S64, p, ir.R(cnt), ir.Imm(ir.S64, 0))
		in := b.BulkPrefetchL2(ir.Addr(a, 0), ir.R(t32))
		in.Guarded, in.Guard = true, p
		return &val{origin: -1}
	}
	line, end := b.New(ir.U64), b.New(ir.U64)
	b.Arith(ir.OpAnd, ir.U64, line, ir.R(start), ir.Imm(ir.U64, ^uint64(127)))
	b.Arith(ir.OpAdd, ir.U64, end, ir.R(start), ir.R(nbytes))
	loop, done := kb.f.NewBlock("prefetch_lines"), kb.f.NewBlock("prefetch_done")
	none := b.New(ir.Pred)
	b.Setp(ir.LE, ir.S64, none, ir.R(cnt), ir.Imm(ir.S64, 0))
	b.BraIf(none, false, done)
	b.Bra(loop)

	b.B = loop
	b.Prefetch(ir.Global, "L2", ir.Addr(line, 0))
	b.Arith(ir.OpAdd, ir.U64, line, ir.R(line), ir.Imm(ir.U64, 128))
	more := b.New(ir.Pred)
	b.Setp(ir.LO, ir.U64, more, ir.R(line), ir.R(end))
	b.BraIf(more, false, loop)
	b.Bra(done)

	b.B = done
	return &val{origin: -1}
}
