package compiler

// Tile kernels need a 1-D block. gpu/tile maps a tile's elements onto
// threads by ThreadIdx().X and BlockDim().X alone (element j·B+i of a row
// tile is thread i's, B = BlockDim().X): under block=16x16 the sixteen
// rows of threads with the same X would all load, compute and store the
// same elements, and a block reduction would count each element sixteen
// times. So a kernel whose //kern:kernel block= has a Y or Z extent above
// 1 may not reach a thread-mapped tile operation, in its own body or in a
// helper it calls [TileBlockShape]. RowOf, Rows and Input name blocks,
// not threads, and stay allowed.

import (
	"fmt"
	"go/ast"
	"go/types"
)

// tileThreadFree are the gpu/tile functions that do not map elements onto
// the block's threads.
var tileThreadFree = map[string]bool{"RowOf": true, "Rows": true, "Input": true, "Row": true, "Matrix": true,
	"NegInf": true, "Full": true, "FullMat": true, "TileOf": true}

// checkTileBlocks reports kernels with a 2-D or 3-D block= that use a
// thread-mapped tile operation (see the file comment).
func (pc *partitionChecker) checkTileBlocks(kernels []*ast.FuncDecl, blocks [][3]int) {
	memo := map[*ast.FuncDecl]string{}
	for i, k := range kernels {
		b := blocks[i]
		if b[1] <= 1 && b[2] <= 1 {
			continue
		}
		at, what := pc.tileUse(k, memo, map[*ast.FuncDecl]bool{})
		if at == nil {
			continue
		}
		shape := fmt.Sprintf("%dx%d", b[0], b[1])
		if b[2] > 1 {
			shape += fmt.Sprintf("x%d", b[2])
		}
		pc.c.d.errorf(at.Pos(), TileBlockShape, "%s maps tiles onto threads by ThreadIdx().X only, but kernel %s has block=%s: give it a 1-D block (block=%d)", what, k.Name.Name, shape, b[0]*b[1]*b[2])
	}
}

// tileUse returns the first call in fd's body that reaches a
// thread-mapped tile operation (the operation itself, or a call of a
// same-package helper that reaches one) and a description of the
// operation with its position; nil if there is none.
func (pc *partitionChecker) tileUse(fd *ast.FuncDecl, memo map[*ast.FuncDecl]string, busy map[*ast.FuncDecl]bool) (*ast.CallExpr, string) {
	if fd.Body == nil || busy[fd] {
		return nil, ""
	}
	busy[fd] = true
	defer delete(busy, fd)
	var at *ast.CallExpr
	var what string
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if at != nil {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fn := pc.callee(call)
		if fn == nil {
			return true
		}
		if fn.Pkg() != nil && fn.Pkg().Path() == TilePath {
			if !tileThreadFree[fn.Name()] {
				at, what = call, fmt.Sprintf("tile.%s (at %s)", fn.Name(), pc.c.shortPos(call.Pos()))
			}
			return true
		}
		if d := pc.decls[fn.Origin()]; d != nil {
			w, seen := memo[d]
			if !seen {
				if c, s := pc.tileUse(d, memo, busy); c != nil {
					w = s
				}
				memo[d] = w
			}
			if w != "" {
				at, what = call, w
			}
		}
		return true
	})
	return at, what
}

// callee is the function or method a call names, or nil (a builtin, a
// conversion, a function value).
func (pc *partitionChecker) callee(call *ast.CallExpr) *types.Func {
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
	fn, _ := pc.c.info.Uses[id].(*types.Func)
	return fn
}
