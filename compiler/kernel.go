package compiler

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
	lf "github.com/gokern/kern/internal/launchfact"
)

// kernelBuilder lowers one kernel: the kernel's own body and every helper
// inlined into it.
type kernelBuilder struct {
	*pkgCtx
	k      *Kernel
	f      *ir.Func
	b      ir.Builder
	bounds bool
	params []Param
	// writes[i] is set when parameter i (a slice) is stored to.
	writes []bool
	// globalLoads are the ld.global instructions through parameters'
	// slices, switched to ld.global.nc when none of the parameters each may
	// read turns out to be written.
	globalLoads []globalLoad
	shared      map[*ssa.Call]*ir.Var
	dyn         *ir.Var
	nlocal      int
	fail        *ir.Block // the bounds-failure handler, created on demand
	failRegs    [3]ir.Reg // site, index, length
	stack       []*ssa.Function
	callSites   []token.Pos // the call of each inlined function in stack
	// index is the kernel's position in the module, part of each site code.
	index int
	// reportedSize is set once KernelTooLarge has been reported.
	reportedSize bool
	// reportedSites is set once a site code overflow has been reported.
	reportedSites bool
	// checks records each bounds-check site's outcome: true when some
	// copy of it keeps its device check.
	checks map[token.Pos]bool
	// argTZ passes what align.go knows of a call's arguments to the
	// helper's frame (set by inlineDirect, taken by newFrame).
	argTZ []int
	// hoistedAt marks the sites some copy of which was hoisted.
	hoistedAt map[token.Pos]bool
	// pdl is the kernel's use of programmatic dependent launch.
	pdl pdlState
	// pdlOption is the directive's pdl.
	pdlOption bool
	// gridParam is set once the hidden grid-barrier parameter is declared
	// (lower_grid.go).
	gridParam bool
	// idx32 is set while lowering a kernel's 32-bit entry, whose launch
	// bounds the parameters' registers in narrowRegs (index32.go).
	idx32      bool
	narrowRegs map[ir.Reg]interval
	// launchRegs maps, in a 32-bit entry, the register of a 64-bit signed
	// integer parameter or of a slice parameter's length to the launch
	// fact operand naming it (launchfact.go).
	launchRegs map[ir.Reg]*lf.Expr
	factSet    *factSet
	// linOf: a shared-tile index that sharedlin.go emitted as e + c.
	linOf map[ir.Reg]linIndex
	// regRange bounds the registers the lowering has defined, for the
	// range analysis of the helpers they are passed to (regrange.go).
	regRange map[ir.Reg]interval
}

// siteCode is what a failing check writes to the error slot's code word
// (a u32, so that the failure handler's compare-and-swap and each site's
// block move one register, not two): the kernel's index in the module + 1
// in the high half (the slot is shared by the module's kernels, and a GPU
// reports it only at the next sync) and the site's index + 1 in the low
// half. A kernel with more sites, or a package with more kernels, than
// the halves hold is reported once as KernelTooLarge.
func (kb *kernelBuilder) siteCode(site int) uint64 {
	if (site+1 > maxSiteCode || kb.index+1 > maxSiteCode) && !kb.reportedSites {
		kb.reportedSites = true
		kb.d.list = append(kb.d.list, Diagnostic{Pos: kb.k.Pos, Code: KernelTooLarge,
			Msg: fmt.Sprintf("kernel %s has more than %d device checks, or its package more than %d kernels: the error slot's site code cannot name them; split the kernel or the package", kb.k.Name, maxSiteCode, maxSiteCode)})
	}
	return uint64((kb.index+1)&maxSiteCode)<<16 | uint64((site+1)&maxSiteCode)
}

// maxSiteCode bounds each half of a site code.
const maxSiteCode = 0xffff

func (c *pkgCtx) compileKernel(fn *ssa.Function, decl *ast.FuncDecl, dir directive) *Kernel {
	pos := decl.Name.Pos()
	sig := fn.Signature
	ok := true
	generic := sig.Recv() != nil || sig.TypeParams().Len() > 0
	if generic {
		c.d.errorf(pos, BadKernelSignature, "kernel %s must be a plain func, not a method or generic func", fn.Name())
		ok = false
	}
	if sig.Results().Len() > 0 {
		c.d.errorf(pos, BadKernelSignature, "kernel %s must not return results: write outputs to a slice parameter", fn.Name())
		ok = false
	}
	if generic {
		return nil // its parameters' types are not known
	}
	if decl.Body == nil {
		c.d.errorf(pos, BadKernelSignature, "kernel %s has no body", fn.Name())
		return nil
	}
	if sig.Params().Len() == 0 || !isThread(sig.Params().At(0).Type()) {
		c.d.errorf(pos, BadKernelSignature, "kernel %s: first parameter must be gpu.Thread, as in func %s(t gpu.Thread, ...)", fn.Name(), fn.Name())
		return nil
	}
	k := &Kernel{Name: fn.Name(), Entry: ptxIdent(fn.Name()), Pos: c.fset.Position(pos), Block: dir.block, Bounds: !dir.nobounds,
		TileLayouts: c.layouts[decl]}
	// The kernel's index in the module's error slot: its 32-bit entry
	// (index32.go) shares it, so it is not len(c.mod.Funcs).
	index := len(c.mod.Funcs) - c.entries32
	f := c.lowerEntry(fn, decl, k, dir, index, ok, false)
	if f == nil {
		return nil
	}
	if dir.idx32 {
		f32 := c.lowerEntry(fn, decl, k, dir, index, true, true)
		if f32 == nil {
			return nil
		}
		k.Entry32 = f32.Name
		c.mod.Funcs = append(c.mod.Funcs, f, f32)
		c.entries32++
	} else {
		c.mod.Funcs = append(c.mod.Funcs, f)
	}
	return k
}

// lowerEntry lowers fn as the kernel k's entry, or as its 32-bit entry
// (idx32), which takes k's parameter layout and adds to k.Sites only the
// sites the first entry does not have (addSite). It fills in k's
// parameters, checks, shared memory and writes from the first entry, and
// returns nil after reporting an error.
func (c *pkgCtx) lowerEntry(fn *ssa.Function, decl *ast.FuncDecl, k *Kernel, dir directive, index int, ok, idx32 bool) *ir.Func {
	pos := decl.Name.Pos()
	sig := fn.Signature
	kb := &kernelBuilder{pkgCtx: c, k: k, bounds: !dir.nobounds, pdlOption: dir.pdl,
		shared: map[*ssa.Call]*ir.Var{}, index: index, checks: map[token.Pos]bool{}, hoistedAt: map[token.Pos]bool{},
		idx32: idx32, narrowRegs: map[ir.Reg]interval{}, regRange: map[ir.Reg]interval{}}
	name := k.Entry
	if idx32 {
		name += idx32Suffix
	}
	kb.f = &ir.Func{Name: name, MaxNTid: dir.block, MinNCTAPerSM: dir.minBlocks, MaxNReg: dir.maxRegs, FastMath: dir.fastmath}
	var params []Param
	for i := 1; i < sig.Params().Len(); i++ {
		v := sig.Params().At(i)
		p, good := kb.kernelParam(v, i-1)
		if !good {
			ok = false
			continue
		}
		params = append(params, p)
		kb.f.Params = append(kb.f.Params, p.PTX...)
	}
	if !ok || !idx32 && !c.checkSubset(decl) {
		return nil
	}
	kb.params = params
	kb.writes = make([]bool, len(params))
	nerr := len(c.d.list)
	kb.lowerKernel(fn)
	if len(c.d.list) > nerr {
		return nil
	}
	if idx32 {
		k.Checks32 = kb.checkReport() // fewer kept: launch facts (launchfact.go)
	} else {
		// The report, the parameters and the shared memory are the
		// first entry's; the same source makes the same writes.
		k.Params = params
		k.Checks = kb.checkReport()
		for i := range k.Params {
			k.Params[i].Writes = kb.writes[i]
		}
	}
	var written uint64
	for i, p := range k.Params {
		if p.Writes && i < 64 {
			written |= 1 << i
		}
	}
	// A load may use the read-only path when no parameter it may read is
	// written by the kernel.
	for _, l := range kb.globalLoads {
		if l.params&written == 0 {
			l.in.Text = "ld.global.nc" + l.in.Text[len("ld.global"):]
		}
	}
	if idx32 {
		return kb.f
	}
	for _, v := range kb.f.Vars {
		if v.Space == ir.Shared && !v.Extern {
			// Each array starts at its alignment, as ptxas lays them out.
			a := max(v.Align, 1)
			k.SharedBytes = (k.SharedBytes+a-1)/a*a + v.Size
		}
	}
	k.Dynamic = kb.dyn != nil
	if k.SharedBytes > 48*1024 {
		c.d.errorf(pos, SharedTooLarge, "kernel %s declares %d bytes of static shared memory; the limit is 49152 (48 KiB): use gpu.DynShared for more", k.Name, k.SharedBytes)
		return nil
	}
	return kb.f
}

// kernelParam checks one kernel parameter's type and lays out its .params.
func (kb *kernelBuilder) kernelParam(v *types.Var, i int) (Param, bool) {
	name := v.Name()
	if name == "" || name == "_" {
		name = fmt.Sprintf("p%d", i)
	}
	id := ptxIdent(name)
	switch t := v.Type().Underlying().(type) {
	case *types.Slice:
		et := scalarType(t.Elem())
		if et == ir.Invalid {
			break
		}
		return Param{Name: name, Kind: Slice, GoType: goTypeIn(t.Elem(), kb.pkg), Size: memBytes(et),
			PTX: []ir.Param{{Name: id + "_ptr", Type: ir.U64}, {Name: id + "_len", Type: ir.S64}}}, true
	case *types.Basic:
		st := scalarType(t)
		if st == ir.Invalid {
			break
		}
		pt := st
		if st == ir.Pred {
			pt = ir.U8
		}
		return Param{Name: name, Kind: Scalar, GoType: goTypeIn(v.Type(), kb.pkg), Size: memBytes(st),
			PTX: []ir.Param{{Name: id, Type: pt}}}, true
	}
	kb.d.errorf(v.Pos(), BadKernelSignature, "kernel parameter %s has type %s; kernels take scalars (bool, ints, floats, gpu.Half, gpu.BFloat16) and slices of them", name, typeName(v.Type()))
	return Param{}, false
}

func memBytes(t ir.Type) int {
	if t == ir.Pred {
		return 1
	}
	return t.Bytes()
}
