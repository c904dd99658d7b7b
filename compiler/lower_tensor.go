package compiler

// Tensor cores (mma.sync, PTX ISA §9.7.14.5), ldmatrix (§9.7.14.5.15),
// asynchronous copies (cp.async, §9.7.9.25) and vectorised global loads
// and stores. Fragment layouts are documented in package gpu (mma.go).

import (
	"fmt"
	"strings"

	"github.com/gokern/kern/compiler/ir"
)

var tensorIntrinsics = map[string]intrinsicFunc{
	"MMAF16":  func(kb *kernelBuilder, c *icall) *val { return kb.mma(c, "m16n8k16.row.col.f32.f16.f16.f32", ir.F32) },
	"MMABF16": func(kb *kernelBuilder, c *icall) *val { return kb.mma(c, "m16n8k16.row.col.f32.bf16.bf16.f32", ir.F32) },
	"MMAS8":   func(kb *kernelBuilder, c *icall) *val { return kb.mma(c, "m16n8k32.row.col.s32.s8.s8.s32", ir.S32) },

	"LdMatrixX1":      func(kb *kernelBuilder, c *icall) *val { return kb.ldmatrix(c, 1, false) },
	"LdMatrixX2":      func(kb *kernelBuilder, c *icall) *val { return kb.ldmatrix(c, 2, false) },
	"LdMatrixX4":      func(kb *kernelBuilder, c *icall) *val { return kb.ldmatrix(c, 4, false) },
	"LdMatrixX1Trans": func(kb *kernelBuilder, c *icall) *val { return kb.ldmatrix(c, 1, true) },
	"LdMatrixX2Trans": func(kb *kernelBuilder, c *icall) *val { return kb.ldmatrix(c, 2, true) },
	"LdMatrixX4Trans": func(kb *kernelBuilder, c *icall) *val { return kb.ldmatrix(c, 4, true) },

	"CpAsync":      func(kb *kernelBuilder, c *icall) *val { return kb.cpAsync(c, false) },
	"CpAsyncZFill": func(kb *kernelBuilder, c *icall) *val { return kb.cpAsync(c, true) },
	"CpAsyncCommit": func(kb *kernelBuilder, c *icall) *val {
		if kb.need(c.call.Pos(), "gpu.CpAsyncCommit", 70, 80) {
			kb.b.Emit(ir.OpCpAsyncCommit, "cp.async.commit_group")
		}
		return &val{origin: -1}
	},
	"CpAsyncWait": func(kb *kernelBuilder, c *icall) *val {
		n, ok := c.constArg(1)
		if !ok || n < 0 || n > 7 {
			kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.CpAsyncWait needs a constant group count 0..7")
			return &val{origin: -1}
		}
		if kb.need(c.call.Pos(), "gpu.CpAsyncWait", 70, 80) {
			kb.b.Emit(ir.OpCpAsyncWait, "cp.async.wait_group", ir.Imm(ir.U32, uint64(n)))
		}
		return &val{origin: -1}
	},

	"Load2":  func(kb *kernelBuilder, c *icall) *val { return kb.vecLoad(c, 2) },
	"Load4":  func(kb *kernelBuilder, c *icall) *val { return kb.vecLoad(c, 4) },
	"Store2": func(kb *kernelBuilder, c *icall) *val { return kb.vecStore(c, 2) },
	"Store4": func(kb *kernelBuilder, c *icall) *val { return kb.vecStore(c, 4) },
	"Load8":  func(kb *kernelBuilder, c *icall) *val { return kb.vecLoad(c, 8) },
	"Store8": func(kb *kernelBuilder, c *icall) *val { return kb.vecStore(c, 8) },
	// ld.global{.nc}.L1::no_allocate.L2::256B.v4 (§9.7.9.8, "ld": the
	// eviction priority and prefetch size qualifiers), PTX 7.4, sm_80.
	"Load8Stream": func(kb *kernelBuilder, c *icall) *val {
		if c.args[0].space != ir.Global {
			kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.Load8Stream needs a slice in global memory (a kernel parameter or a slice of one)")
			return kb.zeroVal(c.call.Type())
		}
		if !kb.need(c.call.Pos(), "gpu.Load8Stream (ld.global.L2::256B)", 74, 80) {
			return kb.zeroVal(c.call.Type())
		}
		return kb.vecLoadHint(c, 8, ".L1::no_allocate.L2::256B")
	},
}

// regsOf materialises every scalar of v in registers of type t.
func (kb *kernelBuilder) regsOf(v *val, t ir.Type) []ir.Reg {
	out := make([]ir.Reg, len(v.ops))
	for i, o := range v.ops {
		out[i] = kb.reg(o, t)
	}
	return out
}

func (kb *kernelBuilder) mma(c *icall, shape string, acc ir.Type) *val {
	kb.requireUniform(c, true)
	if !kb.need(c.call.Pos(), "gpu."+c.name+" (mma.sync "+shape[:8]+")", 70, 80) {
		return kb.zeroVal(c.call.Type())
	}
	a := kb.regsOf(c.args[1], ir.U32)
	b := kb.regsOf(c.args[2], ir.U32)
	cc := kb.regsOf(c.args[3], acc)
	d := make([]ir.Reg, 4)
	for i := range d {
		d[i] = kb.b.New(acc)
	}
	kb.b.Emit(ir.OpMma, "mma.sync.aligned."+shape, ir.Vec(d...), ir.Vec(a...), ir.Vec(b...), ir.Vec(cc...))
	out := &val{origin: -1}
	for _, r := range d {
		out.ops = append(out.ops, ir.R(r))
	}
	return out
}

// spaceAddr returns a pointer argument as an address in space want
// (shared or global), converting a generic one; a pointer known to be in
// another space is an error naming where it must point instead.
func (kb *kernelBuilder) spaceAddr(c *icall, p *val, want ir.Space, what string) (ir.Operand, bool) {
	switch p.space {
	case want:
		return ir.Addr(kb.reg(p.ops[0], ir.U64), 0), true
	case ir.Generic:
		r := kb.b.New(ir.U64)
		kb.b.Cvta(want, true, r, p.ops[0])
		return ir.Addr(r, 0), true
	}
	where := "into a slice parameter (global memory)"
	if want == ir.Shared {
		where = "into shared memory (gpu.Shared or gpu.DynShared)"
	}
	kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "%s of gpu.%s must point %s, not %s memory", what, c.name, where, p.space)
	return ir.Operand{}, false
}

func (kb *kernelBuilder) ldmatrix(c *icall, n int, trans bool) *val {
	kb.requireUniform(c, true)
	if !kb.need(c.call.Pos(), "gpu."+c.name+" (ldmatrix)", 65, 75) {
		return kb.zeroVal(c.call.Type())
	}
	addr, ok := kb.spaceAddr(c, c.args[1], ir.Shared, "the row pointer")
	if !ok {
		return kb.zeroVal(c.call.Type())
	}
	d := make([]ir.Reg, n)
	for i := range d {
		d[i] = kb.b.New(ir.U32)
	}
	tr := ""
	if trans {
		tr = ".trans"
	}
	kb.b.Emit(ir.OpLdmatrix, fmt.Sprintf("ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16", n, tr), ir.Vec(d...), addr)
	out := &val{origin: -1}
	for _, r := range d {
		out.ops = append(out.ops, ir.R(r))
	}
	return out
}

func (kb *kernelBuilder) cpAsync(c *icall, zfill bool) *val {
	size, ok := c.constArg(3)
	if !ok || (size != 4 && size != 8 && size != 16) {
		kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.%s needs a constant size of 4, 8 or 16 bytes", c.name)
		return &val{origin: -1}
	}
	if !kb.need(c.call.Pos(), "gpu."+c.name+" (cp.async)", 70, 80) {
		return &val{origin: -1}
	}
	dst, ok1 := kb.spaceAddr(c, c.args[1], ir.Shared, "dst")
	src, ok2 := kb.spaceAddr(c, c.args[2], ir.Global, "src")
	if !ok1 || !ok2 {
		return &val{origin: -1}
	}
	// .cg (cache at L2 only) is allowed only for 16-byte copies.
	cache := "ca"
	if size == 16 {
		cache = "cg"
	}
	args := []ir.Operand{dst, src, ir.Imm(ir.U32, uint64(size))}
	if zfill {
		s := c.arg(4)
		if s.Kind == ir.KImm {
			args = append(args, ir.Imm(ir.U32, s.Imm&0xffffffff))
		} else {
			r := kb.b.New(ir.U32)
			kb.b.Cvt(ir.U32, ir.S64, "", r, s)
			args = append(args, ir.R(r))
		}
	}
	kb.b.Emit(ir.OpCpAsync, "cp.async."+cache+".shared.global", args...)
	return &val{origin: -1}
}

// vecAccess checks s[i .. i+n-1] and returns the address of s[i].
func (kb *kernelBuilder) vecAccess(c *icall, n int) (addr ir.Operand, et ir.Type, ok bool) {
	s := c.args[0]
	et = scalarType(c.elem)
	bits := memBytes(et) * 8 * n
	if bits != 64 && bits != 128 && bits != 32 || n == 8 && memBytes(et) != 2 {
		kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.%s of %s moves %d bits; vector accesses must be 32, 64 or 128 bits", c.name, typeName(c.elem), bits)
		return ir.Operand{}, et, false
	}
	i := kb.index64(c.arg(1), c.call.Call.Args[1].Type())
	kb.checkBounds(i, s.ops[1], c.call.Pos())
	last := kb.b.New(ir.S64)
	kb.b.Arith(ir.OpAdd, ir.S64, last, i, ir.Imm(ir.S64, uint64(n-1)))
	kb.checkBounds(ir.R(last), s.ops[1], c.call.Pos())
	p := kb.addOffset(s.ops[0], i, int64(memBytes(et)))
	addr = ir.Addr(kb.reg(p, ir.U64), 0)
	kb.checkVecAlign(c, addr.Reg, bits/8)
	return addr, et, true
}

func (kb *kernelBuilder) vecLoad(c *icall, n int) *val { return kb.vecLoadHint(c, n, "") }

// vecLoadHint is vecLoad with cache qualifiers (".L1::…", ".L2::…") after
// ld.global; the read-only rewrite (kernel.go) puts .nc before them, where
// the PTX grammar of ld.global.nc has it.
func (kb *kernelBuilder) vecLoadHint(c *icall, n int, hint string) *val {
	addr, et, ok := kb.vecAccess(c, n)
	if !ok {
		return kb.zeroVal(c.call.Type())
	}
	d := make([]ir.Reg, n)
	for i := range d {
		d[i] = kb.b.New(et)
	}
	s := c.args[0]
	if n == 8 {
		// PTX has no .v8 of 16-bit elements: 4 words, each split in two
		// (the low half is the lower address, little-endian).
		w := make([]ir.Reg, 4)
		for i := range w {
			w[i] = kb.b.New(ir.U32)
		}
		kb.b.Ld(s.space, false, ir.U32, ir.Vec(w...), addr)
		if hint != "" {
			in := kb.b.B.Instrs[len(kb.b.B.Instrs)-1]
			in.Text = "ld.global" + hint + strings.TrimPrefix(in.Text, "ld.global")
		}
		kb.noteGlobalLoad(s)
		for i, r := range w {
			hi := kb.b.New(ir.U32)
			kb.b.Cvt(et, ir.U32, "", d[2*i], ir.R(r))
			kb.b.Shift(ir.OpShr, ir.B32, hi, ir.R(r), ir.Imm(ir.U32, 16))
			kb.b.Cvt(et, ir.U32, "", d[2*i+1], ir.R(hi))
		}
	} else {
		kb.b.Ld(s.space, false, et, ir.Vec(d...), addr)
		kb.noteGlobalLoad(s)
	}
	out := &val{origin: -1}
	for _, r := range d {
		out.ops = append(out.ops, ir.R(r))
	}
	return out
}

func (kb *kernelBuilder) vecStore(c *icall, n int) *val {
	addr, et, ok := kb.vecAccess(c, n)
	if !ok {
		return &val{origin: -1}
	}
	kb.noteWrite(c.args[0])
	v := kb.regsOf(c.args[2], et)
	if n == 8 {
		w := make([]ir.Reg, 4)
		for i := range w {
			w[i] = kb.b.New(ir.U32)
			kb.b.Emit(ir.OpMov, "mov.b32", ir.R(w[i]), ir.Vec(v[2*i], v[2*i+1]))
		}
		v, et = w, ir.U32
	}
	kb.b.St(c.args[0].space, et, addr, ir.Vec(v...))
	return &val{origin: -1}
}
