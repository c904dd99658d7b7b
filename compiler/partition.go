package compiler

// Partitioned outputs and read-only inputs of tile kernels (gpu/tile).
//
// A tile kernel writes an output through tile.Rows, which gives the
// calling block its own row (a tile.Part) and nothing else, and reads an
// input through tile.Input (a tile.In, which nothing in gpu/tile writes).
// Both promises hold only if the kernel does not also reach the
// underlying slice parameter some other way, so this check rejects, per
// kernel, over the kernel and the helpers it calls:
//
//   - a slice parameter passed to tile.Rows (or tile.Tiles, or
//     tile.Heads, an attention output's rows) that is also written directly
//     (s[i] = v, s[i]++, &s[i]), re-sliced, assigned to a variable or
//     passed to anything but tile.Rows, len, cap or a same-package helper
//     that does none of these [WriteOutsidePartition]: any of those could
//     write another block's rows;
//   - a slice parameter passed to tile.Input that is also written,
//     escapes as above, or is partitioned as an output, and a write
//     through a tile.In value itself [WriteToInput].
//
// The check is on the AST with types: it follows a parameter into the
// helpers it is passed to (by the callee's parameter), so generic helpers
// such as ops/internal/tilerow's softmaxTile are summarised once per declaration.

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// paramUse is how a function uses one of its slice parameters; each
// field is the first position of that use, or token.NoPos.
type paramUse struct {
	part  token.Pos // passed to tile.Rows, tile.Tiles or tile.Heads
	input token.Pos // passed to tile.Input
	write token.Pos // written, or escapes where it could be written

	partFn string // "Rows", "Tiles" or "Heads", the partition at part
}

func (u *paramUse) merge(v paramUse) {
	first := func(a *token.Pos, b token.Pos) {
		if !a.IsValid() {
			*a = b
		}
	}
	if !u.part.IsValid() {
		u.partFn = v.partFn
	}
	first(&u.part, v.part)
	first(&u.input, v.input)
	first(&u.write, v.write)
}

// partitionChecker summarises functions of the kernel package.
type partitionChecker struct {
	c     *pkgCtx
	decls map[*types.Func]*ast.FuncDecl
	memo  map[*ast.FuncDecl][]paramUse
	busy  map[*ast.FuncDecl]bool
}

// checkPartitions reports the partition and input violations of the
// kernels (see the file comment).
func (c *pkgCtx) checkPartitions(kernels []*ast.FuncDecl, blocks [][3]int) {
	pc := &partitionChecker{c: c, decls: map[*types.Func]*ast.FuncDecl{},
		memo: map[*ast.FuncDecl][]paramUse{}, busy: map[*ast.FuncDecl]bool{}}
	usesTile := false
	for _, f := range c.files {
		for _, imp := range f.Imports {
			if imp.Path.Value == `"`+TilePath+`"` {
				usesTile = true
			}
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				if fn, ok := c.info.Defs[fd.Name].(*types.Func); ok {
					pc.decls[fn] = fd
				}
			}
		}
	}
	if !usesTile {
		return
	}
	for _, f := range c.files {
		pc.inputWrites(f)
	}
	pc.checkTileBlocks(kernels, blocks)
	c.layouts = pc.tileLayouts(kernels, blocks)
	for _, k := range kernels {
		params := pc.params(k)
		for i, u := range pc.summary(k) {
			name := params[i]
			switch {
			case u.input.IsValid() && u.part.IsValid():
				c.d.errorf(u.part, WriteToInput, "%s is viewed as a read-only input (tile.Input at %s) and partitioned as an output here: give the kernel separate input and output slices", name, c.shortPos(u.input))
			case u.input.IsValid() && u.write.IsValid():
				c.d.errorf(u.write, WriteToInput, "%s is viewed as a read-only input (tile.Input at %s) but may be written here: read it only through its tile.In view", name, c.shortPos(u.input))
			case u.part.IsValid() && u.write.IsValid():
				c.d.errorf(u.write, WriteOutsidePartition, "%s is partitioned among blocks (tile.%s at %s) but may be written outside the block's partition here: write only through the partition that tile.%[2]s returns", name, u.partFn, c.shortPos(u.part))
			}
		}
	}
}

// shortPos is pos as file:line:col with the file's base name.
func (c *pkgCtx) shortPos(pos token.Pos) string {
	p := c.fset.Position(pos)
	return fmt.Sprintf("%s:%d:%d", baseName(p.Filename), p.Line, p.Column)
}

// params is fd's parameter names in order (one per parameter, "_" for
// unnamed ones).
func (pc *partitionChecker) params(fd *ast.FuncDecl) []string {
	var names []string
	for _, f := range fd.Type.Params.List {
		if len(f.Names) == 0 {
			names = append(names, "_")
		}
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
	}
	return names
}

// summary is how fd uses each of its parameters, following calls to
// same-package helpers. A recursive cycle (rejected elsewhere) ends with
// no uses.
func (pc *partitionChecker) summary(fd *ast.FuncDecl) []paramUse {
	if s, ok := pc.memo[fd]; ok {
		return s
	}
	if pc.busy[fd] || fd.Body == nil {
		return nil
	}
	pc.busy[fd] = true
	defer delete(pc.busy, fd)
	info := pc.c.info
	objs := map[types.Object]int{}
	i := 0
	for _, f := range fd.Type.Params.List {
		if len(f.Names) == 0 {
			i++
		}
		for _, n := range f.Names {
			if _, isSlice := info.TypeOf(n).Underlying().(*types.Slice); isSlice {
				objs[info.Defs[n]] = i
			}
			i++
		}
	}
	uses := make([]paramUse, i)
	// handled marks the identifiers of parameters whose use is accounted
	// for; every other mention of one escapes.
	handled := map[*ast.Ident]bool{}
	param := func(e ast.Expr) (int, *ast.Ident, bool) {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return 0, nil, false
		}
		k, ok := objs[info.Uses[id]]
		return k, id, ok
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IndexExpr: // a read, unless an assignment or & below marks it
			if _, id, ok := param(n.X); ok {
				handled[id] = true
			}
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				pc.markWrite(l, param, uses)
			}
		case *ast.IncDecStmt:
			pc.markWrite(n.X, param, uses)
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				pc.markWrite(n.X, param, uses)
			}
		case *ast.RangeStmt:
			if _, id, ok := param(n.X); ok {
				handled[id] = true // for i, v := range s reads
			}
		case *ast.CallExpr:
			pc.call(n, param, handled, uses)
		}
		return true
	})
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && !handled[id] {
			if k, ok := objs[info.Uses[id]]; ok && !uses[k].write.IsValid() {
				uses[k].write = id.Pos()
			}
		}
		return true
	})
	pc.memo[fd] = uses
	return uses
}

// markWrite records a store through s[i] for a parameter s.
func (pc *partitionChecker) markWrite(e ast.Expr, param func(ast.Expr) (int, *ast.Ident, bool), uses []paramUse) {
	ix, ok := ast.Unparen(e).(*ast.IndexExpr)
	if !ok {
		return
	}
	if k, _, ok := param(ix.X); ok && !uses[k].write.IsValid() {
		uses[k].write = ix.Pos()
	}
}

// call accounts for parameters passed to a call.
func (pc *partitionChecker) call(call *ast.CallExpr, param func(ast.Expr) (int, *ast.Ident, bool), handled map[*ast.Ident]bool, uses []paramUse) {
	info := pc.c.info
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
		return
	}
	switch obj := info.Uses[id].(type) {
	case *types.Builtin:
		if obj.Name() == "len" || obj.Name() == "cap" {
			for _, a := range call.Args {
				if _, pid, ok := param(a); ok {
					handled[pid] = true
				}
			}
		}
	case *types.Func:
		if obj.Pkg() != nil && obj.Pkg().Path() == TilePath && (obj.Name() == "Rows" || obj.Name() == "Tiles" || obj.Name() == "Heads" || obj.Name() == "Input") {
			for _, a := range call.Args {
				// A re-slice s[i:j] passed on is partitioned (or viewed)
				// too, and escapes: its identifier stays unhandled.
				sl, resliced := ast.Unparen(a).(*ast.SliceExpr)
				if resliced {
					a = sl.X
				}
				if k, pid, ok := param(a); ok {
					handled[pid] = !resliced
					if obj.Name() != "Input" && !uses[k].part.IsValid() {
						uses[k].part, uses[k].partFn = pid.Pos(), obj.Name()
					} else if obj.Name() == "Input" && !uses[k].input.IsValid() {
						uses[k].input = pid.Pos()
					}
				}
			}
			return
		}
		fd := pc.decls[obj.Origin()]
		if fd == nil {
			return
		}
		sub := pc.summary(fd)
		for i, a := range call.Args {
			if k, pid, ok := param(a); ok && i < len(sub) {
				handled[pid] = true
				uses[k].merge(sub[i])
			}
		}
	}
}

// inputWrites reports stores through a tile.In value: In is a slice type,
// so Go accepts v[i] = x; its promise is that nothing writes it.
func (pc *partitionChecker) inputWrites(f *ast.File) {
	isIn := func(e ast.Expr) bool {
		ix, ok := ast.Unparen(e).(*ast.IndexExpr)
		if !ok {
			return false
		}
		n, ok := types.Unalias(pc.c.info.TypeOf(ix.X)).(*types.Named)
		return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == TilePath && n.Obj().Name() == "In"
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var targets []ast.Expr
		switch n := n.(type) {
		case *ast.AssignStmt:
			targets = n.Lhs
		case *ast.IncDecStmt:
			targets = []ast.Expr{n.X}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				targets = []ast.Expr{n.X}
			}
		}
		for _, e := range targets {
			if isIn(e) {
				pc.c.d.errorf(e.Pos(), WriteToInput, "a tile.In view is read-only: write outputs through the tile.Part of tile.Rows")
			}
		}
		return true
	})
}
