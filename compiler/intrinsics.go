package compiler

// Intrinsics: calls into package gpu, recognised by package path and
// name (gpuIntrinsicName), dispatched through one table. Each handler
// lowers the call in place; the Go bodies in package gpu are never
// compiled. Handlers for a family live in lower_<family>.go.

import (
	"fmt"
	"go/constant"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

// icall is one intrinsic call being lowered.
type icall struct {
	fr   *frame
	call *ssa.Call
	name string
	args []*val
	// elem is the first type argument of a generic intrinsic, if any.
	elem types.Type
}

// arg returns argument i's first scalar operand.
func (c *icall) arg(i int) ir.Operand { return c.args[i].ops[0] }

// constArg returns argument i as a constant integer.
func (c *icall) constArg(i int) (int64, bool) {
	k, ok := c.call.Call.Args[i].(*ssa.Const)
	if !ok || k.Value == nil {
		return 0, false
	}
	return constant.Int64Val(constant.ToInt(k.Value))
}

type intrinsicFunc func(kb *kernelBuilder, c *icall) *val

var intrinsics map[string]intrinsicFunc

func init() {
	intrinsics = map[string]intrinsicFunc{}
	for _, table := range []map[string]intrinsicFunc{threadIntrinsics, warpIntrinsics, atomicIntrinsics, mathIntrinsics, packedIntrinsics, tensorIntrinsics, hopperIntrinsics, wgmmaIntrinsics, wgmmaMajorIntrinsics, tmaIntrinsics, setmaxnregIntrinsics, tmaStoreIntrinsics, pdlIntrinsics, gridIntrinsics, prefetchIntrinsics, clockIntrinsics} {
		for k, v := range table {
			intrinsics[k] = v
		}
	}
}

func (kb *kernelBuilder) intrinsic(fr *frame, call *ssa.Call, name string) *val {
	h, ok := intrinsics[name]
	if !ok {
		kb.d.errorf(call.Pos(), UnsupportedCall, "gpu.%s cannot be used in a kernel", name)
		return kb.zeroVal(call.Type())
	}
	c := &icall{fr: fr, call: call, name: name}
	for _, a := range call.Call.Args {
		c.args = append(c.args, kb.value(fr, a))
	}
	if ta := call.Call.StaticCallee().TypeArgs(); len(ta) > 0 {
		c.elem = ta[0]
	}
	return h(kb, c)
}

func scalar(r ir.Reg) *val { return &val{ops: []ir.Operand{ir.R(r)}, origin: -1} }

// requireUniform rejects a collective reached under control flow that
// differs between threads at the given scope.
func (kb *kernelBuilder) requireUniform(c *icall, warpScope bool) {
	l := c.fr.uni.block[c.call.Block().Index]
	switch {
	case !warpScope && l > uniform:
		kb.d.errorf(c.call.Pos(), DivergentBarrier, "%s is reached under a condition that differs between the block's threads (%s control flow)%s: every thread of the block must reach it together; move it out of the branch or loop, or make the condition depend only on block-uniform values", describe(c.name), l, kb.inlinedFrom())
	case warpScope && l > warpUniform:
		kb.d.errorf(c.call.Pos(), DivergentBarrier, "%s is a warp collective reached under a condition that differs between lanes of a warp%s: all 32 lanes must call it together; move it out of the branch or loop", describe(c.name), kb.inlinedFrom())
	}
}

// inlinedFrom names the call sites of the helpers being lowered, innermost
// first: a barrier in a helper is divergent because of where it is called.
func (kb *kernelBuilder) inlinedFrom() string {
	s := ""
	for i := len(kb.callSites) - 1; i >= 0; i-- {
		s += ", called at " + kb.posString(kb.callSites[i])
	}
	if s != "" {
		s = " (in a helper" + s + ")"
	}
	return s
}

func describe(name string) string {
	if name == "Thread.Sync" {
		return "t.Sync()"
	}
	if name == "Thread.SyncWarp" {
		return "t.SyncWarp()"
	}
	return "gpu." + name
}

var threadIntrinsics = map[string]intrinsicFunc{
	"Thread.ThreadIdx": func(kb *kernelBuilder, c *icall) *val { return kb.dim3("%tid") },
	"Thread.BlockIdx":  func(kb *kernelBuilder, c *icall) *val { return kb.dim3("%ctaid") },
	"Thread.BlockDim":  func(kb *kernelBuilder, c *icall) *val { return kb.dim3("%ntid") },
	"Thread.GridDim":   func(kb *kernelBuilder, c *icall) *val { return kb.dim3("%nctaid") },
	"Thread.GlobalX":   func(kb *kernelBuilder, c *icall) *val { return scalar(kb.global("x")) },
	"Thread.GlobalY":   func(kb *kernelBuilder, c *icall) *val { return scalar(kb.global("y")) },
	"Thread.GlobalZ":   func(kb *kernelBuilder, c *icall) *val { return scalar(kb.global("z")) },
	"Thread.LinearIdx": func(kb *kernelBuilder, c *icall) *val {
		r := kb.b.New(ir.S64)
		kb.b.Cvt(ir.S64, ir.U32, "", r, ir.R(kb.linear()))
		return scalar(r)
	},
	"Thread.Lane": func(kb *kernelBuilder, c *icall) *val {
		r := kb.b.New(ir.S64)
		kb.b.Cvt(ir.S64, ir.U32, "", r, ir.R(kb.special("%laneid")))
		return scalar(r)
	},
	"Thread.Warp": func(kb *kernelBuilder, c *icall) *val {
		// Warps are formed from linear thread ids (%warpid is the hardware
		// slot and may change, PTX ISA §10.13).
		w := kb.b.New(ir.U32)
		kb.b.Shift(ir.OpShr, ir.U32, w, ir.R(kb.linear()), ir.Imm(ir.U32, 5))
		r := kb.b.New(ir.S64)
		kb.b.Cvt(ir.S64, ir.U32, "", r, ir.R(w))
		return scalar(r)
	},
	"Thread.Sync": func(kb *kernelBuilder, c *icall) *val {
		kb.requireUniform(c, false)
		kb.b.Emit(ir.OpBar, "bar.sync", ir.Imm(ir.U32, 0))
		return &val{origin: -1}
	},
	"Thread.SyncWarp": func(kb *kernelBuilder, c *icall) *val {
		kb.requireUniform(c, true)
		kb.b.Emit(ir.OpBarWarp, "bar.warp.sync", ir.Imm(ir.S32, 0xffffffff))
		return &val{origin: -1}
	},
	"Shared":    (*kernelBuilder).sharedArray,
	"DynShared": (*kernelBuilder).dynShared,
}

func (kb *kernelBuilder) special(name string) ir.Reg {
	r := kb.b.New(ir.U32)
	kb.b.Mov(ir.U32, r, ir.Special(name))
	return r
}

func (kb *kernelBuilder) dim3(base string) *val {
	v := &val{origin: -1}
	for _, d := range []string{"x", "y", "z"} {
		r := kb.b.New(ir.S64)
		kb.b.Cvt(ir.S64, ir.U32, "", r, ir.R(kb.special(base+"."+d)))
		v.ops = append(v.ops, ir.R(r))
	}
	return v
}

// global is ctaid*ntid + tid along one dimension, widened before the
// multiply so grids past 2^32 threads do not wrap.
func (kb *kernelBuilder) global(d string) ir.Reg {
	wide := kb.b.New(ir.U64)
	kb.b.Emit(ir.OpMul, "mul.wide.u32", ir.R(wide), ir.R(kb.special("%ctaid."+d)), ir.R(kb.special("%ntid."+d)))
	tid := kb.b.New(ir.U64)
	kb.b.Cvt(ir.U64, ir.U32, "", tid, ir.R(kb.special("%tid."+d)))
	r := kb.b.New(ir.S64)
	kb.b.Arith(ir.OpAdd, ir.S64, r, ir.R(wide), ir.R(tid))
	return r
}

// linear is (tid.z*ntid.y + tid.y)*ntid.x + tid.x in a u32, shorter
// where the block= directive allows (linearByDirective).
func (kb *kernelBuilder) linear() ir.Reg {
	if r, ok := kb.linearByDirective(); ok {
		return r
	}
	return kb.linearGeneric()
}

// linearGeneric is linear for any block shape: two mads.
func (kb *kernelBuilder) linearGeneric() ir.Reg {
	zy := kb.b.New(ir.U32)
	kb.b.Emit(ir.OpMad, "mad.lo.u32", ir.R(zy), ir.R(kb.special("%tid.z")), ir.R(kb.special("%ntid.y")), ir.R(kb.special("%tid.y")))
	r := kb.b.New(ir.U32)
	kb.b.Emit(ir.OpMad, "mad.lo.u32", ir.R(r), ir.R(zy), ir.R(kb.special("%ntid.x")), ir.R(kb.special("%tid.x")))
	return r
}

func (kb *kernelBuilder) sharedArray(c *icall) *val {
	et := scalarType(c.elem)
	n, ok := c.constArg(1)
	if !ok {
		kb.d.errorf(c.call.Pos(), NonConstantShared, "gpu.Shared needs a constant length; for a size chosen at launch use gpu.DynShared")
		return kb.zeroVal(c.call.Type())
	}
	if n < 0 {
		kb.d.errorf(c.call.Pos(), NonConstantShared, "gpu.Shared length %d is negative", n)
		return kb.zeroVal(c.call.Type())
	}
	if n > 48*1024 { // more bytes than the limit, whatever T is (and no overflow below)
		kb.d.errorf(c.call.Pos(), SharedTooLarge, "gpu.Shared of %d elements is more than the 49152 bytes (48 KiB) of static shared memory: use gpu.DynShared", n)
		return kb.zeroVal(c.call.Type())
	}
	v, ok := kb.shared[c.call]
	if !ok {
		v = &ir.Var{Name: fmt.Sprintf("smem%d", len(kb.shared)), Space: ir.Shared, Align: kb.sharedAlign(n * int64(memBytes(et))), Size: int(max(n*int64(memBytes(et)), 1))}
		kb.shared[c.call] = v
		kb.f.Vars = append(kb.f.Vars, v)
	}
	addr := kb.b.New(ir.U64)
	kb.b.Mov(ir.U64, addr, ir.Sym(v.Name))
	return &val{ops: []ir.Operand{ir.R(addr), ir.Imm(ir.S64, uint64(n)), ir.Imm(ir.S64, uint64(n))}, space: ir.Shared, origin: -1, align: log2Size(int64(v.Align))}
}

func (kb *kernelBuilder) dynShared(c *icall) *val {
	if kb.dyn == nil {
		kb.dyn = &ir.Var{Name: "dynsmem", Space: ir.Shared, Align: kb.sharedAlign(1 << 20), Extern: true}
		kb.f.Vars = append(kb.f.Vars, kb.dyn)
	}
	addr := kb.b.New(ir.U64)
	kb.b.Mov(ir.U64, addr, ir.Sym(kb.dyn.Name))
	bytes := kb.special("%dynamic_smem_size")
	size := memBytes(scalarType(c.elem))
	n := kb.b.New(ir.U32)
	kb.b.Arith(ir.OpDiv, ir.U32, n, ir.R(bytes), ir.Imm(ir.U32, uint64(size)))
	n64 := kb.b.New(ir.S64)
	kb.b.Cvt(ir.S64, ir.U32, "", n64, ir.R(n))
	kb.version = max(kb.version, 41)
	return &val{ops: []ir.Operand{ir.R(addr), ir.R(n64), ir.R(n64)}, space: ir.Shared, origin: -1, align: log2Size(int64(kb.dyn.Align))}
}
