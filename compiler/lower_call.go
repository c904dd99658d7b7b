package compiler

// Calls: builtins, inlined helpers and the dispatch to intrinsics.
//
// Every helper call is inlined: kernels have no call stack to speak of
// (a PTX .func call costs a register spill convention), helpers are small,
// and inlining lets the uniformity analysis and address-space tracking see
// the caller's facts. Recursion is therefore an error.

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
)

const maxInlineDepth = 32

func (kb *kernelBuilder) lowerCall(fr *frame, call *ssa.Call) {
	common := call.Common()
	if common.IsInvoke() {
		kb.d.errorf(call.Pos(), UnsupportedInterface, "interface method calls are not supported in kernels: use a concrete type")
		fr.vals[call] = kb.zeroVal(call.Type())
		return
	}
	if bi, ok := common.Value.(*ssa.Builtin); ok {
		fr.vals[call] = kb.builtin(fr, call, bi.Name())
		return
	}
	callee := common.StaticCallee()
	if callee == nil {
		kb.d.errorf(call.Pos(), UnsupportedClosure, "calls through func values are not supported in kernels: call a named helper func directly")
		fr.vals[call] = kb.zeroVal(call.Type())
		return
	}
	if name, ok := gpuIntrinsicName(callee); ok {
		fr.vals[call] = kb.intrinsic(fr, call, name)
		return
	}
	if path, name, ok := stdFunc(callee); ok {
		fr.vals[call] = kb.stdIntrinsic(fr, call, path, name)
		return
	}
	if kb.inlinable(callee) {
		fr.vals[call] = kb.inline(fr, call, callee)
		return
	}
	kb.d.errorf(call.Pos(), UnsupportedCall, "cannot call %s from a kernel: kernels may call helper funcs of the same package, package gpu, and the math and math/bits functions listed in docs/language.md", callee.String())
	fr.vals[call] = kb.zeroVal(call.Type())
}

// stdFunc reports whether fn is a function of math or math/bits.
func stdFunc(fn *ssa.Function) (path, name string, ok bool) {
	obj, isFunc := fn.Object().(*types.Func)
	if !isFunc || obj.Pkg() == nil {
		return "", "", false
	}
	switch p := obj.Pkg().Path(); p {
	case "math", "math/bits":
		return p, obj.Name(), true
	}
	return "", "", false
}

// DevMathPath is the package of device math routines the compiler inlines
// for the gpu math intrinsics that have no single PTX instruction.
const DevMathPath = "github.com/gokern/kern/gpu/devmath"

// TilePath is the tile-level language (gpu/tile): Go built on package gpu
// whose functions the compiler inlines like a kernel's own helpers.
const TilePath = "github.com/gokern/kern/gpu/tile"

// libPaths are the packages of kern's own whose function bodies the
// compiler builds and inlines, recognised by import path (as TinyGo
// recognises its intrinsics).
var libPaths = []string{DevMathPath, TilePath}

// isLib reports whether path is one of libPaths.
func isLib(path string) bool { return path == DevMathPath || path == TilePath }

func (kb *kernelBuilder) inlinable(fn *ssa.Function) bool {
	p := ownerPkg(fn)
	if len(fn.Blocks) == 0 || p == nil {
		return false
	}
	return kb.ownOrLib(p)
}

// ownerPkg is the package whose source defines fn, or nil. An instance of
// a generic function has no Pkg of its own; its origin has.
func ownerPkg(fn *ssa.Function) *types.Package {
	if o := fn.Origin(); o != nil {
		fn = o
	}
	if fn.Pkg == nil {
		return nil
	}
	return fn.Pkg.Pkg
}

func (kb *kernelBuilder) inline(fr *frame, call *ssa.Call, callee *ssa.Function) *val {
	for _, f := range kb.stack {
		if f == callee || (callee.Origin() != nil && f.Origin() == callee.Origin()) {
			kb.d.errorf(call.Pos(), UnsupportedRecursion, "recursive call to %s: kernel helpers are inlined, so they cannot recurse; rewrite it as a loop", callee.Name())
			return kb.zeroVal(call.Type())
		}
	}
	if len(kb.stack) >= maxInlineDepth {
		kb.d.errorf(call.Pos(), UnsupportedRecursion, "helper calls nest deeper than %d", maxInlineDepth)
		return kb.zeroVal(call.Type())
	}
	if kb.tooLarge(call.Pos()) {
		return kb.zeroVal(call.Type())
	}
	syn := callee.Syntax()
	if callee.Origin() != nil {
		syn = callee.Origin().Syntax()
	}
	if fd, ok := syn.(*ast.FuncDecl); ok && ownerPkg(callee) == kb.pkg && !kb.checkSubset(fd) {
		return kb.zeroVal(call.Type())
	}
	if fd, ok := syn.(*ast.FuncDecl); ok && !kb.checkLibrarySubset(ownerPkg(callee), fd) {
		return kb.zeroVal(call.Type())
	}
	args := make([]*val, len(call.Call.Args))
	for i, a := range call.Call.Args {
		args[i] = kb.value(fr, a)
	}
	return kb.inlineDirect(fr, call, callee, args)
}

// maxKernelRegs bounds a kernel's virtual registers after inlining and
// unrolling: far more than ptxas compiles in reasonable time, and a stop
// for inlining that grows exponentially.
const maxKernelRegs = 1 << 18

// tooLarge reports (once per kernel) whether the kernel has outgrown
// maxKernelRegs.
func (kb *kernelBuilder) tooLarge(pos token.Pos) bool {
	if len(kb.f.Regs) <= maxKernelRegs {
		return false
	}
	if !kb.reportedSize {
		kb.reportedSize = true
		// Reported at the kernel, naming where it ran out.
		kb.d.list = append(kb.d.list, Diagnostic{Pos: kb.k.Pos, Code: KernelTooLarge,
			Msg: fmt.Sprintf("kernel %s grows past %d registers once helpers are inlined and loops unrolled (reached at %s): call fewer helpers from helpers, or unroll less", kb.k.Name, maxKernelRegs, kb.posString(pos))})
	}
	return true
}

// inlineDirect inlines callee at call with already-lowered arguments
// (which match the call's arguments one for one).
func (kb *kernelBuilder) inlineDirect(fr *frame, call *ssa.Call, callee *ssa.Function, args []*val) *val {
	levels := make([]level, len(args))
	for i := range args {
		if i < len(call.Call.Args) {
			levels[i] = fr.uni.get(call.Call.Args[i])
		}
	}
	base := fr.uni.block[call.Block().Index]
	kb.stack = append(kb.stack, callee)
	kb.callSites = append(kb.callSites, call.Pos())
	defer func() {
		kb.stack = kb.stack[:len(kb.stack)-1]
		kb.callSites = kb.callSites[:len(kb.callSites)-1]
	}()
	kb.argTZ = make([]int, len(call.Call.Args))
	for i, a := range call.Call.Args {
		kb.argTZ[i] = fr.align.tzAt(a, call.Block())
	}
	sub := kb.newFrame(callee, args, levels, base)
	// A generic helper's label is its name without the type arguments
	// (the block's number keeps it unique): they spelt out package
	// paths, up to 170 characters a label.
	name, _, _ := strings.Cut(callee.Name(), "[")
	sub.ret = kb.f.NewBlock("ret_" + ptxIdent(name))
	resT, _ := flatten(callee.Signature.Results())
	sub.resT = resT
	for _, t := range resT {
		sub.result = append(sub.result, kb.b.New(t))
	}
	kb.b.Bra(sub.blocks[0])
	kb.lowerBody(sub)
	kb.noteResultRanges(sub)
	kb.b.B = sub.ret
	out := &val{origin: -1}
	for _, r := range sub.result {
		out.ops = append(out.ops, ir.R(r))
	}
	if !sub.retUnknown && sub.retSlots != nil && len(sub.retSlots) == len(out.ops) {
		out.slots = sub.retSlots // a struct result (structptr.go)
	}
	// A returned pointer or slice keeps the space all returns agree on.
	out.space, out.origin = ir.Generic, -1
	if res := callee.Signature.Results(); res.Len() == 1 {
		if info, ok := returnSpace(callee, sub); ok {
			out.space, out.origin = info.space, info.origin
		}
	}
	return out
}

func returnSpace(fn *ssa.Function, fr *frame) (ptrInfo, bool) {
	var pi ptrInfo
	for _, b := range fn.Blocks {
		if r, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok && len(r.Results) == 1 {
			got, known := fr.spaces[r.Results[0]]
			if !known {
				return pi, false
			}
			if !pi.set {
				pi = got
			} else if pi.space != got.space {
				return pi, false
			} else if pi.origin != got.origin {
				pi.origin = -1
			}
		}
	}
	return pi, pi.set
}

func (kb *kernelBuilder) builtin(fr *frame, call *ssa.Call, name string) *val {
	args := call.Call.Args
	switch name {
	case "len", "cap":
		x := kb.value(fr, args[0])
		switch t := args[0].Type().Underlying().(type) {
		case *types.Slice:
			if name == "len" {
				return &val{ops: []ir.Operand{x.ops[1]}, origin: -1}
			}
			return &val{ops: []ir.Operand{x.ops[2]}, origin: -1}
		case *types.Pointer:
			if a, ok := t.Elem().Underlying().(*types.Array); ok {
				return &val{ops: []ir.Operand{ir.Imm(ir.S64, uint64(a.Len()))}, origin: -1}
			}
		case *types.Array:
			return &val{ops: []ir.Operand{ir.Imm(ir.S64, uint64(t.Len()))}, origin: -1}
		}
	case "min", "max":
		st := scalarType(call.Type())
		if st == ir.Invalid || st == ir.Pred {
			break
		}
		acc := kb.value(fr, args[0]).ops[0]
		for _, a := range args[1:] {
			acc = ir.R(kb.minMax(name == "max", st, acc, kb.value(fr, a).ops[0], true))
		}
		return &val{ops: []ir.Operand{acc}, origin: -1}
	case "panic":
		kb.lowerPanicValue(fr, call, args[0])
		return kb.zeroVal(call.Type())
	case "ssa:wrapnilchk":
		return kb.value(fr, args[0])
	}
	kb.d.errorf(call.Pos(), UnsupportedCall, "builtin %s is not supported in kernels", name)
	return kb.zeroVal(call.Type())
}

// minMax returns min or max of a and b. With goNaN (the builtins), a NaN
// operand gives NaN as in Go; gpu.Min and gpu.Max return the other operand
// as PTX min/max do.
func (kb *kernelBuilder) minMax(isMax bool, st ir.Type, a, b ir.Operand, goNaN bool) ir.Reg {
	op := ir.OpMin
	if isMax {
		op = ir.OpMax
	}
	if a.Kind == ir.KImm {
		a, b = b, a
	}
	if a.Kind == ir.KImm {
		a = ir.R(kb.reg(a, st))
	}
	r := kb.b.New(st)
	switch {
	case st == ir.F32 && goNaN && kb.tgt.sm >= 80:
		// min.NaN (PTX ISA 7.0, sm_80) propagates NaN.
		kb.b.Emit(op, ir.Ops[op].Name+".NaN.f32", ir.R(r), a, b)
		kb.version = max(kb.version, 70)
	case st.IsFloat() && goNaN:
		kb.b.Arith(op, st, r, a, b)
		// If either is NaN, a+b is NaN: select it.
		nan := kb.b.New(ir.Pred)
		kb.b.Setp("nan", st, nan, a, b)
		sum := kb.b.New(st)
		kb.b.Arith(ir.OpAdd, st, sum, a, b)
		kb.b.Selp(st, r, ir.R(sum), ir.R(r), nan)
	default:
		kb.b.Arith(op, st, r, a, b)
	}
	return r
}

func (kb *kernelBuilder) lowerPanic(fr *frame, p *ssa.Panic) {
	kb.lowerPanicValue(fr, p, p.X)
	if !kb.b.Terminated() {
		kb.b.Exit()
	}
}

// lowerPanicValue reports a panic through the error slot as a failed
// check whose site is the panic's position; the host error says
// "panic at file:line".
func (kb *kernelBuilder) lowerPanicValue(fr *frame, instr ssa.Instruction, x ssa.Value) {
	msg := "panic at " + kb.posString(instr.Pos())
	if mi, ok := x.(*ssa.MakeInterface); ok {
		if c, ok := mi.X.(*ssa.Const); ok && c.Value != nil && c.Value.Kind() == constant.String {
			msg += ": " + constant.StringVal(c.Value)
		}
	}
	zero := ir.Imm(ir.U64, 0)
	kb.reportFailure(msg, zero, zero)
	// Anything after the panic in this block is unreachable; give it a
	// block of its own.
	kb.b.B = kb.f.NewBlock("after_panic")
}

// devmathFunc returns the named function of package devmath, or nil when
// the package is not part of the program.
func (kb *kernelBuilder) devmathFunc(name string) *ssa.Function {
	if kb.devmathPkg == nil {
		return nil
	}
	return kb.devmathPkg.Func(name)
}

// checkDivisor makes an integer division by zero panic, as in Go, instead
// of giving PTX's unspecified result: with bounds checks on, a divisor not
// known to be non-zero is tested, and zero reports "integer divide by
// zero" at the division's position through the error slot.
func (kb *kernelBuilder) checkDivisor(b ir.Operand, st ir.Type, pos token.Pos) {
	if !kb.bounds || st.IsFloat() || b.Kind == ir.KImm && b.Imm != 0 {
		return
	}
	p := kb.b.New(ir.Pred)
	kb.b.Setp(ir.EQ, st, p, ir.R(kb.reg(b, st)), zeroOf(st))
	zero := ir.Imm(ir.U64, 0)
	kb.failWhen(p, "divzero", "panic at "+kb.posString(pos)+": integer divide by zero", zero, zero)
}
