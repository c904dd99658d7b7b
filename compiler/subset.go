package compiler

// The subset check: an AST walk over each kernel and helper that reports
// Go constructs outside the kernel language at their exact position, with
// what to write instead. Lowering catches whatever slips past (an SSA
// instruction it cannot lower is an error too); doing it here first gives
// the user the position of the construct rather than of its SSA residue.

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// checkSubset reports the constructs of fd's body outside the kernel
// language and says whether there were none. Lowering skips a function
// that fails it, so that SSA residue of a reported construct does not
// pile up follow-on errors.
func (c *pkgCtx) checkSubset(fd *ast.FuncDecl) bool {
	if fd == nil || fd.Body == nil {
		return true
	}
	if ok, done := c.checked[fd]; done {
		return ok
	}
	before := len(c.d.list)
	// quiet holds variables whose initialiser is itself reported (a
	// closure, a map literal): their type would only repeat the error.
	quiet := map[*ast.Ident]bool{}
	quietIfRejected := func(lhs []*ast.Ident, rhs []ast.Expr) {
		if len(lhs) != len(rhs) {
			return
		}
		for i, r := range rhs {
			switch r := ast.Unparen(r).(type) {
			case *ast.FuncLit:
				quiet[lhs[i]] = true
			case *ast.CompositeLit:
				if t := c.info.TypeOf(r); t != nil {
					if _, isMap := t.Underlying().(*types.Map); isMap {
						quiet[lhs[i]] = true
					}
				}
			}
		}
	}
	// A helper's parameters and results (a kernel's are checked as its
	// signature, before this).
	for _, fl := range []*ast.FieldList{fd.Type.Params, fd.Type.Results} {
		if fl == nil {
			continue
		}
		for _, f := range fl.List {
			for _, id := range f.Names {
				c.checkIdentType(id)
			}
		}
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			var lhs []*ast.Ident
			for _, e := range n.Lhs {
				id, _ := e.(*ast.Ident)
				lhs = append(lhs, id)
			}
			quietIfRejected(lhs, n.Rhs)
		case *ast.ValueSpec:
			quietIfRejected(n.Names, n.Values)
		case *ast.FuncLit:
			c.d.errorf(n.Pos(), UnsupportedClosure, "func literals (closures) are not supported in kernels: write a named helper func in the same package and call it")
			return false
		case *ast.GoStmt:
			c.d.errorf(n.Pos(), UnsupportedGoroutine, "go statements are not supported in kernels: every GPU thread already runs the kernel; launch more threads instead")
			return false
		case *ast.DeferStmt:
			c.d.errorf(n.Pos(), UnsupportedDefer, "defer is not supported in kernels: call the cleanup explicitly before returning")
			return false
		case *ast.SelectStmt:
			c.d.errorf(n.Pos(), UnsupportedChannel, "select is not supported in kernels: threads communicate through shared memory and t.Sync()")
			return false
		case *ast.SendStmt:
			c.d.errorf(n.Pos(), UnsupportedChannel, "channel sends are not supported in kernels: threads communicate through shared memory and t.Sync()")
			return false
		case *ast.TypeSwitchStmt:
			c.d.errorf(n.Pos(), UnsupportedInterface, "type switches are not supported in kernels: use a concrete type or a type parameter")
			return false
		case *ast.TypeAssertExpr:
			c.d.errorf(n.Pos(), UnsupportedInterface, "type assertions are not supported in kernels: use a concrete type or a type parameter")
			return false
		case *ast.BranchStmt:
			if n.Tok == token.GOTO {
				c.d.errorf(n.Pos(), UnsupportedConstruct, "goto is not supported in kernels: use break, continue or a flag")
			}
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				c.d.errorf(n.Pos(), UnsupportedChannel, "channel receives are not supported in kernels: threads communicate through shared memory and t.Sync()")
				return false
			}
		case *ast.CompositeLit:
			if t := c.info.TypeOf(n); t != nil {
				switch t.Underlying().(type) {
				case *types.Slice:
					c.d.errorf(n.Pos(), HeapAllocation, "slice literals allocate on the heap, which kernels cannot: use a local array ([N]T{...})")
					return false
				case *types.Map:
					c.d.errorf(n.Pos(), UnsupportedMap, "maps are not supported in kernels: use a slice indexed by a small integer key")
					return false
				}
			}
		case *ast.CallExpr:
			c.checkCall(n)
		case *ast.BasicLit:
			if n.Kind == token.STRING && !c.isPanicArg(fd, n) {
				c.d.errorf(n.Pos(), UnsupportedString, "strings are not supported in kernels: pass bytes as a []uint8 parameter")
			}
		case *ast.Ident:
			if !quiet[n] {
				c.checkIdentType(n)
			}
		}
		return true
	})
	ok := len(c.d.list) == before
	c.checked[fd] = ok
	return ok
}

// isPanicArg reports whether lit is the constant message of a panic call,
// the one place a string is allowed (it becomes the error's text).
func (c *pkgCtx) isPanicArg(fd *ast.FuncDecl, lit *ast.BasicLit) bool {
	found := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "panic" && len(call.Args) == 1 && call.Args[0] == lit {
				found = true
			}
		}
		return !found
	})
	return found
}

func (c *pkgCtx) checkCall(call *ast.CallExpr) {
	if tv, ok := c.info.Types[call.Fun]; ok && tv.IsType() {
		return // a conversion; lowering checks the types it converts
	}
	fun := ast.Unparen(call.Fun)
	if ix, ok := fun.(*ast.IndexExpr); ok { // f[T](...)
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
	default:
		return
	}
	if fn, isFunc := c.info.Uses[id].(*types.Func); isFunc && fn.Pkg() != nil {
		// Kernels call helpers of their own package, package gpu, and the
		// math and math/bits functions lowering knows (it names any other).
		switch path := fn.Pkg().Path(); {
		case path == c.pkg.Path(), path == GPUPath, path == "math", path == "math/bits", c.isLib(path):
		default:
			c.d.errorf(call.Pos(), UnsupportedCall, "cannot call %s.%s from a kernel: kernels may call helper funcs of the same package, of kernel libraries (packages marked %s), packages gpu and gpu/tile, and the math and math/bits functions listed in docs/language.md", fn.Pkg().Name(), fn.Name(), LibraryDirective)
		}
		return
	}
	if _, isBuiltin := c.info.Uses[id].(*types.Builtin); !isBuiltin {
		return
	}
	switch id.Name {
	case "make", "new", "append":
		c.d.errorf(call.Pos(), HeapAllocation, "%s allocates on the heap, which kernels cannot: use gpu.Shared, a local array, or a buffer parameter", id.Name)
	case "recover":
		c.d.errorf(call.Pos(), UnsupportedDefer, "recover is not supported in kernels")
	case "print", "println":
		c.d.errorf(call.Pos(), UnsupportedCall, "%s is not supported in kernels: write values to an output buffer (fmt works in native mode)", id.Name)
	case "complex", "real", "imag":
		c.d.errorf(call.Pos(), UnsupportedType, "complex numbers are not supported in kernels: use pairs of floats")
	case "clear", "close", "delete":
		c.d.errorf(call.Pos(), UnsupportedCall, "%s is not supported in kernels", id.Name)
	case "copy":
		c.d.errorf(call.Pos(), UnsupportedCall, "copy is not supported in kernels: write the loop (each thread copies its elements)")
	}
}

// checkIdentType rejects declarations of variables whose type kernels
// cannot hold.
func (c *pkgCtx) checkIdentType(id *ast.Ident) {
	obj, ok := c.info.Defs[id].(*types.Var)
	if !ok || obj == nil {
		return
	}
	t := obj.Type()
	if _, isParam := types.Unalias(t).(*types.TypeParam); isParam {
		return // its underlying type is the constraint; instances are checked when lowered
	}
	switch u := t.Underlying().(type) {
	case *types.Map:
		c.d.errorf(id.Pos(), UnsupportedMap, "maps are not supported in kernels: use a slice indexed by a small integer key")
	case *types.Chan:
		c.d.errorf(id.Pos(), UnsupportedChannel, "channels are not supported in kernels: threads communicate through shared memory and t.Sync()")
	case *types.Interface:
		c.d.errorf(id.Pos(), UnsupportedInterface, "interface values are not supported in kernels: use a concrete type or a type parameter")
	case *types.Signature:
		c.d.errorf(id.Pos(), UnsupportedClosure, "func values are not supported in kernels: call a named helper func directly")
	case *types.Basic:
		if u.Info()&types.IsString != 0 {
			c.d.errorf(id.Pos(), UnsupportedString, "strings are not supported in kernels: pass bytes as a []uint8 parameter")
		} else if u.Info()&types.IsComplex != 0 {
			c.d.errorf(id.Pos(), UnsupportedType, "complex numbers are not supported in kernels: use pairs of floats")
		} else if u.Kind() == types.Uintptr || u.Kind() == types.UnsafePointer {
			c.d.errorf(id.Pos(), UnsupportedType, "%s is not supported in kernels", u.Name())
		}
	}
}

// collectUnroll finds //kern:unroll comments and checks that each stands
// above a for loop with a constant trip count of at most 1024.
func (c *pkgCtx) collectUnroll(f *ast.File) { c.collectUnrollIn(f, true) }

// collectUnrollIn records f's //kern:unroll loops; checkTrip checks their
// form on the AST, which needs f's types. A library package's loops
// (libPaths: bounds such as len of a type-parameter array, constant only
// once instantiated) are checked by lowering instead, which reports a
// counter that is not constant in every iteration.
func (c *pkgCtx) collectUnrollIn(f *ast.File, checkTrip bool) {
	for _, cg := range f.Comments {
		for _, cm := range cg.List {
			fields := strings.Fields(cm.Text)
			if len(fields) == 1 && fields[0] == "//kern:nounroll" {
				c.collectNoUnroll(f, cm)
				continue
			}
			if len(fields) == 0 || fields[0] != "//kern:unroll" {
				continue
			}
			if len(fields) > 2 {
				c.d.errorf(cm.Pos(), BadUnroll, "//kern:unroll takes at most one argument, the factor N of //kern:unroll N")
				continue
			}
			by := 0
			if len(fields) == 2 {
				n, err := strconv.Atoi(fields[1])
				if err != nil || n < 2 || n > maxUnrollBy {
					c.d.errorf(cm.Pos(), BadUnroll, "//kern:unroll %s: the factor must be an integer from 2 to %d", fields[1], maxUnrollBy)
					continue
				}
				by = n
			}
			loop := c.loopBelow(f, cm)
			if loop == nil {
				c.d.errorf(cm.Pos(), BadUnroll, "//kern:unroll must be on the line just above a for loop")
				continue
			}
			if by > 0 {
				if _, ok := loop.(*ast.ForStmt); !ok {
					c.d.errorf(loop.Pos(), BadUnroll, "//kern:unroll %d needs a three-clause loop `for i := a; i < n; i += c`; a range loop over a constant unrolls fully with //kern:unroll", by)
					continue
				}
				c.unrollBy[loop.Pos()] = by
				continue
			}
			if n, ok := c.tripCount(loop); checkTrip && (!ok || n > 1024) {
				c.d.errorf(loop.Pos(), BadUnroll, "//kern:unroll needs a loop of the form `for i := 0; i < N; i++` or `for i := range N` (a counter starting at a constant, compared with a constant, stepped by a constant: ++, --, +=, -=, *=, /=, <<=, >>=) running at most 1024 times")
				continue
			}
			c.unroll[loop.Pos()] = true
		}
	}
}

// loopBelow returns the for or range statement that starts on the line
// below comment cm, or nil.
func (c *pkgCtx) loopBelow(f *ast.File, cm *ast.Comment) ast.Stmt {
	line := c.fset.Position(cm.Pos()).Line
	var loop ast.Stmt
	ast.Inspect(f, func(n ast.Node) bool {
		if loop != nil {
			return false
		}
		switch s := n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			if c.fset.Position(s.Pos()).Line == line+1 {
				loop = s.(ast.Stmt)
			}
		}
		return true
	})
	return loop
}

// tripCount returns the constant trip count of a counted loop.
func (c *pkgCtx) tripCount(s ast.Stmt) (int64, bool) {
	constOf := func(e ast.Expr) (int64, bool) {
		tv, ok := c.info.Types[e]
		if !ok || tv.Value == nil {
			return 0, false
		}
		return constant.Int64Val(constant.ToInt(tv.Value))
	}
	switch s := s.(type) {
	case *ast.RangeStmt:
		if n, ok := constOf(s.X); ok {
			return n, true
		}
	case *ast.ForStmt:
		return c.forTripCount(s, constOf)
	}
	return 0, false
}

// forTripCount runs a counted loop's header on constants: an init
// `i := c`, a condition comparing i with a constant, and a post statement
// stepping i by a constant (i++, i--, i += c, i -= c, i *= c, i /= c,
// i <<= c, i >>= c). It gives up past maxUnroll+1 iterations.
func (c *pkgCtx) forTripCount(s *ast.ForStmt, constOf func(ast.Expr) (int64, bool)) (int64, bool) {
	as, ok := s.Init.(*ast.AssignStmt)
	if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
		return 0, false
	}
	id, ok := as.Lhs[0].(*ast.Ident)
	if !ok {
		return 0, false
	}
	i, ok := constOf(as.Rhs[0])
	if !ok {
		return 0, false
	}
	cond, ok := s.Cond.(*ast.BinaryExpr)
	if !ok {
		return 0, false
	}
	op, bound := cond.Op, int64(0)
	if x, isID := cond.X.(*ast.Ident); isID && x.Name == id.Name {
		bound, ok = constOf(cond.Y)
	} else if y, isID := cond.Y.(*ast.Ident); isID && y.Name == id.Name {
		bound, ok = constOf(cond.X)
		op = map[token.Token]token.Token{token.LSS: token.GTR, token.GTR: token.LSS, token.LEQ: token.GEQ, token.GEQ: token.LEQ, token.NEQ: token.NEQ}[op]
	} else {
		return 0, false
	}
	if !ok {
		return 0, false
	}
	var step func(int64) int64
	switch p := s.Post.(type) {
	case *ast.IncDecStmt:
		if x, isID := p.X.(*ast.Ident); !isID || x.Name != id.Name {
			return 0, false
		}
		if p.Tok == token.INC {
			step = func(v int64) int64 { return v + 1 }
		} else {
			step = func(v int64) int64 { return v - 1 }
		}
	case *ast.AssignStmt:
		x, isID := p.Lhs[0].(*ast.Ident)
		k, isConst := constOf(p.Rhs[0])
		if !isID || x.Name != id.Name || !isConst || len(p.Lhs) != 1 {
			return 0, false
		}
		switch p.Tok {
		case token.ADD_ASSIGN:
			step = func(v int64) int64 { return v + k }
		case token.SUB_ASSIGN:
			step = func(v int64) int64 { return v - k }
		case token.MUL_ASSIGN:
			step = func(v int64) int64 { return v * k }
		case token.QUO_ASSIGN:
			if k == 0 {
				return 0, false
			}
			step = func(v int64) int64 { return v / k }
		case token.SHL_ASSIGN:
			step = func(v int64) int64 { return v << uint64(k&63) }
		case token.SHR_ASSIGN:
			step = func(v int64) int64 { return v >> uint64(k&63) }
		default:
			return 0, false
		}
	default:
		return 0, false
	}
	holds := func(v int64) bool {
		switch op {
		case token.LSS:
			return v < bound
		case token.LEQ:
			return v <= bound
		case token.GTR:
			return v > bound
		case token.GEQ:
			return v >= bound
		case token.NEQ:
			return v != bound
		}
		return false
	}
	n := int64(0)
	for ; holds(i); i = step(i) {
		if n++; n > maxUnroll {
			return n, true
		}
	}
	return n, true
}
