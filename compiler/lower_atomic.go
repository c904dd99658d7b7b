package compiler

// Atomics (atom, PTX ISA §9.7.13.5) on global, shared or generic
// addresses. Signed 64-bit add uses .u64: two's-complement addition is
// the same operation, and PTX has no atom.add.s64.

import (
	"github.com/gokern/kern/compiler/ir"
)

var atomicIntrinsics = map[string]intrinsicFunc{
	"AtomicAdd":  func(kb *kernelBuilder, c *icall) *val { return kb.atomic(c, "add") },
	"AtomicMax":  func(kb *kernelBuilder, c *icall) *val { return kb.atomic(c, "max") },
	"AtomicMin":  func(kb *kernelBuilder, c *icall) *val { return kb.atomic(c, "min") },
	"AtomicExch": func(kb *kernelBuilder, c *icall) *val { return kb.atomic(c, "exch") },
	"AtomicCAS":  func(kb *kernelBuilder, c *icall) *val { return kb.atomic(c, "cas") },
	// fence.acq_rel.gpu (§9.7.13.4, "membar/fence"), PTX 6.0, sm_70.
	"ThreadFence": func(kb *kernelBuilder, c *icall) *val {
		if kb.need(c.call.Pos(), "gpu.ThreadFence (fence.acq_rel.gpu)", 60, 70) {
			kb.b.Emit(ir.OpFence, "fence.acq_rel.gpu")
		}
		return &val{origin: -1}
	},
}

func (kb *kernelBuilder) atomic(c *icall, op string) *val {
	st := scalarType(c.elem)
	p := c.args[0]
	if p.cells != nil || p.space == ir.Local { // PTX has no atom.local
		kb.d.errorf(c.call.Pos(), UnsupportedConstruct, "gpu.%s needs an element of a slice or shared array, not a local variable", c.name)
		return kb.zeroVal(c.call.Type())
	}
	kb.noteWrite(p)
	t := st
	switch op {
	case "add":
		if st == ir.S64 {
			t = ir.U64
		}
	case "exch", "cas":
		t = st.Bitwise()
	}
	r := kb.b.New(st)
	addr := ir.Addr(kb.reg(p.ops[0], ir.U64), 0)
	var args []ir.Operand
	for _, a := range c.args[1:] {
		args = append(args, ir.R(kb.reg(a.ops[0], st)))
	}
	if st == ir.F64 && op == "add" {
		kb.need(c.call.Pos(), "gpu.AtomicAdd on float64", 50, 60)
	}
	kb.b.Atom(p.space, op, t, r, addr, args...)
	return scalar(r)
}
