package compiler

// Hopper (sm_90) synchronisation: mbarriers (PTX ISA §9.7.13.15) and the
// async-proxy fence (§9.7.13.4). The mbarrier forms with a transaction
// count and try_wait need sm_90 and PTX ISA 8.0; the rest sm_80 and 7.0.
// Semantics and the native bodies are in package gpu (mbarrier.go).

import (
	"github.com/gokern/kern/compiler/ir"
)

var hopperIntrinsics = map[string]intrinsicFunc{
	// mbarrier.init (PTX ISA §9.7.13.15, "mbarrier.init"), PTX 7.0, sm_80.
	"MbarrierInit": func(kb *kernelBuilder, c *icall) *val {
		if addr, ok := kb.mbarAddr(c, 70, 80); ok {
			kb.b.Emit(ir.OpMbarrier, "mbarrier.init.shared::cta.b64", addr, kb.u32Arg(c, 2))
		}
		return &val{origin: -1}
	},
	// mbarrier.arrive (§9.7.13.15, "mbarrier.arrive"), PTX 7.0, sm_80;
	// .shared::cta spelled out needs PTX 7.8.
	"MbarrierArrive": func(kb *kernelBuilder, c *icall) *val {
		addr, ok := kb.mbarAddr(c, 78, 80)
		if !ok {
			return kb.zeroVal(c.call.Type())
		}
		r := kb.b.New(ir.U64)
		kb.b.Emit(ir.OpMbarrier, "mbarrier.arrive.shared::cta.b64", ir.R(r), addr)
		return scalar(r)
	},
	// mbarrier.arrive.expect_tx (§9.7.13.15, "mbarrier.arrive"), PTX 8.0, sm_90.
	"MbarrierArriveExpectTx": func(kb *kernelBuilder, c *icall) *val {
		addr, ok := kb.mbarAddr(c, 80, 90)
		if !ok {
			return kb.zeroVal(c.call.Type())
		}
		r := kb.b.New(ir.U64)
		kb.b.Emit(ir.OpMbarrier, "mbarrier.arrive.expect_tx.shared::cta.b64", ir.R(r), addr, kb.u32Arg(c, 2))
		return scalar(r)
	},
	// mbarrier.complete_tx (§9.7.13.15, "mbarrier.complete_tx"), PTX 8.0, sm_90.
	"MbarrierCompleteTx": func(kb *kernelBuilder, c *icall) *val {
		if addr, ok := kb.mbarAddr(c, 80, 90); ok {
			kb.b.Emit(ir.OpMbarrier, "mbarrier.complete_tx.shared::cta.b64", addr, kb.u32Arg(c, 2))
		}
		return &val{origin: -1}
	},
	// mbarrier.try_wait.parity (§9.7.13.15, "mbarrier.test_wait/try_wait"),
	// PTX 7.8, sm_90.
	"MbarrierTryWait": func(kb *kernelBuilder, c *icall) *val {
		addr, ok := kb.mbarAddr(c, 78, 90)
		if !ok {
			return kb.zeroVal(c.call.Type())
		}
		par := kb.u32Arg(c, 2)
		if par.Kind == ir.KImm {
			par = ir.Imm(ir.U32, par.Imm&1)
		} else {
			r := kb.b.New(ir.U32)
			kb.b.Arith(ir.OpAnd, ir.U32, r, par, ir.Imm(ir.U32, 1))
			par = ir.R(r)
		}
		p := kb.b.New(ir.Pred)
		kb.b.Emit(ir.OpMbarrier, "mbarrier.try_wait.parity.shared::cta.b64", ir.R(p), addr, par)
		return scalar(p)
	},
	// mbarrier.inval (§9.7.13.15, "mbarrier.inval"), PTX 7.0, sm_80.
	"MbarrierInval": func(kb *kernelBuilder, c *icall) *val {
		if addr, ok := kb.mbarAddr(c, 78, 80); ok {
			kb.b.Emit(ir.OpMbarrier, "mbarrier.inval.shared::cta.b64", addr)
		}
		return &val{origin: -1}
	},
	// fence.proxy.async (§9.7.13.4, "membar/fence"), PTX 8.0, sm_90.
	"FenceProxyAsync": func(kb *kernelBuilder, c *icall) *val {
		if kb.need(c.call.Pos(), "gpu.FenceProxyAsync (fence.proxy.async)", 80, 90) {
			kb.b.Emit(ir.OpFence, "fence.proxy.async.shared::cta")
		}
		return &val{origin: -1}
	},
}

// mbarAddr checks the target and returns the shared-memory address of the
// mbarrier argument (argument 1).
func (kb *kernelBuilder) mbarAddr(c *icall, version, sm int) (ir.Operand, bool) {
	if !kb.need(c.call.Pos(), "gpu."+c.name, version, sm) {
		return ir.Operand{}, false
	}
	return kb.spaceAddr(c, c.args[1], ir.Shared, "the mbarrier")
}

// u32Arg returns integer argument i as a .u32 operand: an immediate
// truncated to 32 bits, or a register converted from the Go int.
func (kb *kernelBuilder) u32Arg(c *icall, i int) ir.Operand {
	o := c.arg(i)
	if o.Kind == ir.KImm {
		return ir.Imm(ir.U32, o.Imm&0xffffffff)
	}
	r := kb.b.New(ir.U32)
	kb.b.Cvt(ir.U32, scalarType(c.call.Call.Args[i].Type()), "", r, o)
	return ir.R(r)
}
