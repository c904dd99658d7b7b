package compiler

// The layouts a tile kernel's tiles get, for kern check -v: gpu/tile fixes
// them by the tile's type and the kernel's block (gpu/tile/mat.go,
// dot.go), and this says which, per kernel, in words, so that an author
// sees how the tiles map onto threads, shared memory and tensor cores
// without reading PTX.

import (
	"fmt"
	"go/ast"
	"go/types"
	"sort"
	"strings"
)

// tileLayouts returns, per kernel, one line per kind of tile operation
// the kernel reaches (in its body or its helpers), sorted.
func (pc *partitionChecker) tileLayouts(kernels []*ast.FuncDecl, blocks [][3]int) map[*ast.FuncDecl][]string {
	out := map[*ast.FuncDecl][]string{}
	for i, k := range kernels {
		threads := max(blocks[i][0], 1) * max(blocks[i][1], 1) * max(blocks[i][2], 1)
		if blocks[i] == [3]int{} {
			threads = 0 // unknown: the launch decides
		}
		seen := map[string]bool{}
		pc.walkTileCalls(k, map[*ast.FuncDecl]bool{}, func(fn *types.Func, call *ast.CallExpr) {
			if l := pc.layoutOf(fn, call, threads); l != "" {
				seen[l] = true
			}
		})
		for l := range seen {
			out[k] = append(out[k], l)
		}
		sort.Strings(out[k])
	}
	return out
}

// walkTileCalls calls f for each call of a gpu/tile function in fd and
// the same-package helpers it calls.
func (pc *partitionChecker) walkTileCalls(fd *ast.FuncDecl, seen map[*ast.FuncDecl]bool, f func(*types.Func, *ast.CallExpr)) {
	if fd.Body == nil || seen[fd] {
		return
	}
	seen[fd] = true
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fn := pc.callee(call)
		switch {
		case fn == nil:
		case fn.Pkg() != nil && fn.Pkg().Path() == TilePath:
			f(fn, call)
		case pc.decls[fn.Origin()] != nil:
			pc.walkTileCalls(pc.decls[fn.Origin()], seen, f)
		}
		return true
	})
}

// layoutOf describes the layout a tile operation implies ("" for one
// that has none of its own).
func (pc *partitionChecker) layoutOf(fn *types.Func, call *ast.CallExpr, threads int) string {
	warps := "W warps"
	if threads > 0 {
		warps = fmt.Sprintf("W = %d warps", threads/32)
	}
	if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
		return methodLayout(sig.Recv().Type(), fn.Name())
	}
	switch fn.Name() {
	case "Load", "Store":
		return "row tile: register j of thread i holds element j·B+i (coalesced per register; B = the block's threads)"
	case "LoadMat", "StoreMat", "BroadcastRow", "BroadcastCol":
		i, j := pc.regs2(call)
		return fmt.Sprintf("2-D tile %s: %s·W × %s elements (%s), warp w holds rows w·%[2]s … w·%[2]s+%[2]s-1, lane l columns l, l+32, … (coalesced per register); row reductions by shuffles, column reductions through shared memory", pc.typeArgs(call), i, j, warps)
	case "Stage":
		return "tile.Stage: operand rows of 32 f16/bf16 (64 bytes) in shared memory, 16-byte chunk c of row r at c ^ ((r>>1)&3); copied by cp.async 16-byte chunks with zero-fill when rows are a multiple of 8 elements, else element by element"
	case "Dot":
		return fmt.Sprintf("tile.Dot: Acc 32·W × 64 (%s), warp w rows 32w … 32w+31 as 2×8 mma tiles; per warp and k16: 2 ldmatrix.x4 (A) + 4 ldmatrix.x4 (B) from the swizzled operands, 16 mma.sync.aligned.m16n8k16 f32 accumulators", warps)
	case "DotK":
		return fmt.Sprintf("tile.DotK: Acc 32·W × 64 (%s) and operands as tile.Dot and tile.Stage, over all of K in a ring of 2 slabs per operand (per BK: cp.async.wait_group 0, one barrier, the copies of the next slab, the MMAs); lane l of warp w copies 16-byte chunk l&3 of rows l>>2, +8, +16, +24 of the warp's 32 rows of A, thread i chunks i and i+B of B's 256; rows or K not a multiple of 8 elements, or fewer than 4 warps: element copies into the same ring", warps)
	case "Heads":
		return "tile.Heads: block (x, y, z) owns query rows 64x … 64x+63 of sequence z at head y of out [tokens, heads, hd] (32-bit stores of the mma C layout's column pairs) and the same rows of lse [heads, tokens]"
	}
	return ""
}

// methodLayout describes the layout a tile method implies (a method of
// Acc or Attn; the others have none of their own). recv is the
// receiver's type, an instance of a generic one for Attn.
func methodLayout(recv types.Type, name string) string {
	if p, ok := recv.(*types.Pointer); ok {
		recv = p.Elem()
	}
	n, ok := recv.(*types.Named)
	if !ok {
		return ""
	}
	switch n.Obj().Name() + "." + name {
	case "Acc.Mat":
		return "Acc.Mat: accumulators to the 2-D tile layout [32][2] per thread through 8 rows × 72 words of shared memory per warp (64-bit stores, conflict-free)"
	case "Attn.Stage":
		return "tile.Attn.Stage: a 64-row tile of hd f16/bf16 per slot of the kernel's shared array, rows padded to hd+8 elements (ldmatrix's 8 rows and a quarter warp's 16-byte copies in distinct bank groups); thread i copies chunk i%(hd/8) of rows i/(hd/8), +128/(hd/8), … by cp.async, zero-filled past the sequence"
	case "Attn.QK":
		return "tile.Attn.QK: S = Q·Kᵀ, 64 rows × 64 keys over 4 warps (warp w rows 16w …) as a Frag in mma.sync.m16n8k16's C layout (lane l rows l/4 and l/4+8, columns 2(l%4), +1 of each n8 tile); per warp and k16: 4 ldmatrix.x4 of K (+1 of Q at hd 64; in registers at 128) and 8 mma"
	case "Attn.PV":
		return "tile.Attn.PV: O += P·V with P's A fragments taken from S's C layout (packed to f16/bf16 in registers, no shared memory) and V by ldmatrix.x4.trans; per warp and 16 keys: hd/16 ldmatrix and hd/8 mma"
	}
	return ""
}

// regs2 returns I and 32·J of the 2-D tile type arguments of call, as
// text ("I", "32·J" when they are type parameters of a generic helper).
func (pc *partitionChecker) regs2(call *ast.CallExpr) (string, string) {
	args := pc.instanceArgs(call)
	if len(args) >= 2 {
		if r, ok := args[0].Underlying().(*types.Array); ok {
			if k, ok := args[1].Underlying().(*types.Array); ok {
				return fmt.Sprint(r.Len()), fmt.Sprint(32 * k.Len())
			}
		}
	}
	return "I", "32·J"
}

// typeArgs is call's instantiation as [A, B, …], or "".
func (pc *partitionChecker) typeArgs(call *ast.CallExpr) string {
	var s []string
	for _, t := range pc.instanceArgs(call) {
		s = append(s, types.TypeString(t, func(p *types.Package) string { return p.Name() }))
	}
	if len(s) > 2 {
		s = s[:2] // the tile's register types; the rest are the storage's
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// instanceArgs is the type arguments of the generic function call names.
func (pc *partitionChecker) instanceArgs(call *ast.CallExpr) []types.Type {
	fun := ast.Unparen(call.Fun)
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun = ix.X
	} else if ix, ok := fun.(*ast.IndexListExpr); ok {
		fun = ix.X
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	}
	if id == nil {
		return nil
	}
	inst, ok := pc.c.info.Instances[id]
	if !ok || inst.TypeArgs == nil {
		return nil
	}
	var out []types.Type
	for i := range inst.TypeArgs.Len() {
		out = append(out, inst.TypeArgs.At(i))
	}
	return out
}
