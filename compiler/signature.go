package compiler

// Kernel signatures checked on the syntax alone, before type checking.
//
// The declaration stub (stub.go) spells each kernel's launcher from its
// parameter list, so a signature the stub cannot spell — a generic kernel,
// a method, a parameter that is not a scalar or a slice of one — would
// otherwise surface as a type error inside the generated file instead of
// at the user's own line. Such kernels are left out of the stub and
// reported here with BadKernelSignature; when the package then fails to
// type-check, these diagnostics are what Compile reports.

import (
	"go/ast"
	"go/token"
	"go/types"
)

// syntaxSignatureErrors returns the BadKernelSignature diagnostics of a
// kernel declaration that can be found without types; none means the stub
// can declare its launcher.
func syntaxSignatureErrors(fset *token.FileSet, fd *ast.FuncDecl) ErrorList {
	var out ErrorList
	add := func(pos token.Pos, format string, args ...any) {
		d := diags{fset: fset}
		d.errorf(pos, BadKernelSignature, format, args...)
		out = append(out, d.list...)
	}
	name := fd.Name.Name
	if fd.Recv != nil {
		add(fd.Name.Pos(), "kernel %s must be a plain func, not a method: write func %s(t gpu.Thread, ...) and pass the receiver's fields as parameters", name, name)
		return out
	}
	if fd.Type.TypeParams != nil && fd.Type.TypeParams.NumFields() > 0 {
		add(fd.Name.Pos(), "kernel %s must be a plain func, not a method or generic func: write a generic helper and one kernel per element type that calls it", name)
		return out
	}
	for i, field := range fd.Type.Params.List {
		if i == 0 {
			continue // gpu.Thread; compileKernel checks its type
		}
		if spellable(field.Type) {
			continue
		}
		pname, pos := "_", field.Type.Pos()
		if len(field.Names) > 0 {
			pname, pos = field.Names[0].Name, field.Names[0].Pos() // where compileKernel reports it
		}
		add(pos, "kernel parameter %s has type %s; kernels take scalars (bool, ints, floats, gpu.Half, gpu.BFloat16) and slices of them", pname, types.ExprString(field.Type))
	}
	return out
}

// spellable reports whether a parameter type is a name (float32,
// gpu.Half, a local named type) or a slice of one: the forms a launcher
// can take without knowing types.
func spellable(e ast.Expr) bool {
	if at, ok := e.(*ast.ArrayType); ok && at.Len == nil {
		e = at.Elt
	}
	switch e := e.(type) {
	case *ast.Ident:
		return true
	case *ast.SelectorExpr:
		_, ok := e.X.(*ast.Ident)
		return ok
	}
	return false
}
