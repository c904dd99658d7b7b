package compiler

// Hopper (sm_90) synchronisation: mbarriers (PTX ISA §9.7.13.15) and the
// async-proxy fence (§9.7.13.4). The mbarrier forms with a transaction
// count and try_wait need sm_90 and PTX ISA 8.0; the rest sm_80 and 7.0.
// Semantics and the native bodies are in package gpu (mbarrier.go).

import (
	"fmt"

	"golang.org/x/tools/go/ssa"

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

// Warpgroup MMA (wgmma, PTX ISA §9.7.15), sm_90a only: the "a" target
// features are not forward compatible, so a module that uses them is
// compiled for exactly sm_90a (kern gen -arch sm_90a).
var wgmmaIntrinsics = map[string]intrinsicFunc{
	// wgmma.fence (§9.7.15, "wgmma.fence"), PTX 8.0.
	"WGMMAFence": func(kb *kernelBuilder, c *icall) *val {
		if kb.needWGMMA(c) {
			kb.b.Emit(ir.OpWgmma, "wgmma.fence.sync.aligned")
		}
		return &val{origin: -1}
	},
	// wgmma.commit_group (§9.7.15, "wgmma.commit_group"), PTX 8.0.
	"WGMMACommitGroup": func(kb *kernelBuilder, c *icall) *val {
		if kb.needWGMMA(c) {
			kb.b.Emit(ir.OpWgmma, "wgmma.commit_group.sync.aligned")
		}
		return &val{origin: -1}
	},
	// wgmma.wait_group (§9.7.15, "wgmma.wait_group"), PTX 8.0.
	"WGMMAWaitGroup": func(kb *kernelBuilder, c *icall) *val {
		n, ok := c.constArg(1)
		if !ok || n < 0 || n > 7 {
			kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.WGMMAWaitGroup needs a constant group count 0..7")
			return &val{origin: -1}
		}
		if kb.needWGMMA(c) {
			kb.b.Emit(ir.OpWgmma, "wgmma.wait_group.sync.aligned", ir.Imm(ir.U32, uint64(n)))
		}
		return &val{origin: -1}
	},
	"WGMMAF16":      func(kb *kernelBuilder, c *icall) *val { return kb.wgmma(c, "f16", false) },
	"WGMMABF16":     func(kb *kernelBuilder, c *icall) *val { return kb.wgmma(c, "bf16", false) },
	"WGMMAF16RegA":  func(kb *kernelBuilder, c *icall) *val { return kb.wgmma(c, "f16", true) },
	"WGMMABF16RegA": func(kb *kernelBuilder, c *icall) *val { return kb.wgmma(c, "bf16", true) },
	"WGMMADesc":     (*kernelBuilder).wgmmaDesc,
}

// needWGMMA checks that the module targets sm_90a.
func (kb *kernelBuilder) needWGMMA(c *icall) bool {
	kb.requireUniform(c, true)
	if kb.tgt.name != "sm_90a" {
		kb.d.errorf(c.call.Pos(), UnsupportedTarget, "gpu.%s (wgmma) needs sm_90a; compiling for %s (kern gen -arch sm_90a)", c.name, kb.tgt.name)
		return false
	}
	kb.version = max(kb.version, 80)
	return true
}

// inPlaceAccumulator reports whether call is a wgmma intrinsic whose
// accumulator pointer (argument 1) is v: such a use keeps a local array in
// registers, which the instruction then reads and writes in place.
func inPlaceAccumulator(call *ssa.Call, v ssa.Value) bool {
	f := call.Call.StaticCallee()
	if f == nil || len(call.Call.Args) < 2 || call.Call.Args[1] != v {
		return false
	}
	name, ok := gpuIntrinsicName(f)
	if !ok {
		return false
	}
	switch name {
	case "WGMMAF16", "WGMMABF16", "WGMMAF16RegA", "WGMMABF16RegA",
		"WGMMAF16Major", "WGMMABF16Major", "WGMMAF16RegAMajor", "WGMMABF16RegAMajor":
		return true
	}
	return false
}

// wgmma lowers wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T (§9.7.15,
// "wgmma.mma_async"): d, a-desc | {a0..a3}, b-desc, scale-d, imm-scale-a,
// imm-scale-b{, imm-trans-a}, imm-trans-b. d is the accumulator array's
// own registers, read and written in place: PTX leaves accessing them
// before the wgmma.wait_group that retires the operation undefined, so no
// copy may come between (a value-returning form would need one).
func (kb *kernelBuilder) wgmma(c *icall, typ string, regA bool) *val {
	return kb.wgmmaTrans(c, typ, regA, 0, 0)
}

// wgmmaTrans is wgmma with the imm-trans-a and imm-trans-b operands (0
// K-major, 1 MN-major; transA is ignored for register A).
func (kb *kernelBuilder) wgmmaTrans(c *icall, typ string, regA bool, transA, transB uint64) *val {
	if !kb.needWGMMA(c) {
		return &val{origin: -1}
	}
	d := c.args[1].cells
	if d == nil {
		kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.%s: the accumulator must be a local array variable kept in registers (index it only with constants, //kern:unroll loops)", c.name)
		return &val{origin: -1}
	}
	n := 2 * len(d)
	if n != 64 && n != 128 && n != 256 {
		kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.%s: an accumulator of %d float32 is not N/2 for N = 64, 128 or 256", c.name, len(d))
		return &val{origin: -1}
	}
	var a ir.Operand
	if regA {
		a = ir.Vec(kb.regsOf(c.args[2], ir.U32)...)
	} else {
		a = ir.R(kb.reg(c.arg(2), ir.U64))
	}
	var scale ir.Operand
	if k, ok := c.constArg(4); ok {
		scale = ir.Imm(ir.S32, uint64(k&1))
	} else if o := c.arg(4); o.Kind == ir.KImm {
		scale = ir.Imm(ir.S32, o.Imm&1)
	} else {
		scale = ir.R(kb.reg(o, ir.Pred))
	}
	args := []ir.Operand{ir.Vec(d...), a, ir.R(kb.reg(c.arg(3), ir.U64)), scale, ir.Imm(ir.S32, 1), ir.Imm(ir.S32, 1)}
	if !regA {
		args = append(args, ir.Imm(ir.S32, transA))
	}
	args = append(args, ir.Imm(ir.S32, transB))
	kb.b.Emit(ir.OpWgmma, fmt.Sprintf("wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s", n, typ, typ), args...)
	return &val{origin: -1}
}

// wgmmaDesc lowers gpu.WGMMADesc: (shared address & 0x3ffff) >> 4 or'ed
// with the constant fields (§9.7.15, "Matrix Descriptor Format"); the
// same packing as gpu.EncodeWGMMADesc.
func (kb *kernelBuilder) wgmmaDesc(c *icall) *val {
	lbo, ok1 := c.constArg(2)
	sbo, ok2 := c.constArg(3)
	sw, ok3 := c.constArg(4)
	if !ok1 || !ok2 || !ok3 || sw < 0 || sw > 3 || lbo < 0 || sbo < 0 || lbo%16 != 0 || sbo%16 != 0 || lbo >= 1<<18 || sbo >= 1<<18 {
		kb.d.errorf(c.call.Pos(), BadIntrinsicArg, "gpu.WGMMADesc needs constant byte offsets (multiples of 16 below 2^18) and a constant gpu.Swizzle")
		return kb.zeroVal(c.call.Type())
	}
	if !kb.need(c.call.Pos(), "gpu.WGMMADesc", 80, 90) {
		return kb.zeroVal(c.call.Type())
	}
	addr, ok := kb.spaceAddr(c, c.args[1], ir.Shared, "the operand pointer")
	if !ok {
		return kb.zeroVal(c.call.Type())
	}
	mode := [...]uint64{0, 3, 2, 1}[sw]
	hi := uint64(lbo)>>4<<16 | uint64(sbo)>>4<<32 | mode<<62
	lo := kb.b.New(ir.U64)
	kb.b.Arith(ir.OpAnd, ir.U64, lo, ir.R(addr.Reg), ir.Imm(ir.U64, 0x3ffff))
	sh := kb.b.New(ir.U64)
	kb.b.Shift(ir.OpShr, ir.U64, sh, ir.R(lo), ir.Imm(ir.U32, 4))
	r := kb.b.New(ir.U64)
	kb.b.Arith(ir.OpOr, ir.U64, r, ir.R(sh), ir.Imm(ir.U64, hi))
	return scalar(r)
}

// sharedAlign is the alignment of a shared array of n bytes: 16, or on
// sm_90a 1024 for arrays of 1 KiB or more (dynamic shared memory
// included), since a 128-byte swizzled tile that TMA writes or wgmma reads
// must start at a 1024-byte boundary of the shared address space
// (PTX ISA §9.7.15, "Shared Memory Matrix Layout"; CUDA's tensor-map
// documentation). Older targets keep their layout.
func (kb *kernelBuilder) sharedAlign(n int64) int {
	if kb.tgt.name == "sm_90a" && n >= 1024 {
		return 1024
	}
	return 16
}

// tmaIntrinsics: TMA copies (cp.async.bulk.tensor, PTX ISA §9.7.9.25.5),
// PTX 8.0, sm_90.
var tmaIntrinsics = map[string]intrinsicFunc{
	"TMALoad2D": (*kernelBuilder).tmaLoad2D,
}

// tmaLoad2D lowers gpu.TMALoad2D to
// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// [dst], [tmap, {x, y}], [bar] (§9.7.9.25.5.1). The map is in global
// memory (a slice parameter), addressed generically: global addresses
// are their own generic addresses.
func (kb *kernelBuilder) tmaLoad2D(c *icall) *val {
	if !kb.need(c.call.Pos(), "gpu.TMALoad2D (cp.async.bulk.tensor)", 80, 90) {
		return &val{origin: -1}
	}
	dst, ok1 := kb.spaceAddr(c, c.args[1], ir.Shared, "dst")
	tmap, ok2 := kb.spaceAddr(c, c.args[2], ir.Global, "the tensor map")
	bar, ok3 := kb.spaceAddr(c, c.args[5], ir.Shared, "the mbarrier")
	if !ok1 || !ok2 || !ok3 {
		return &val{origin: -1}
	}
	coord := func(i int) ir.Reg {
		r := kb.b.New(ir.S32)
		o := kb.u32Arg(c, i)
		if o.Kind == ir.KImm {
			kb.b.Mov(ir.S32, r, ir.Imm(ir.S32, o.Imm))
		} else {
			kb.b.Mov(ir.S32, r, o)
		}
		return r
	}
	x, y := coord(3), coord(4)
	kb.b.Emit(ir.OpCpAsync, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
		dst, ir.TensorAddr(tmap.Reg, x, y), bar)
	return &val{origin: -1}
}
