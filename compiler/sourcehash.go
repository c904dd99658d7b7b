package compiler

// The source fingerprint of each kernel (see internal/srchash): which
// functions of the kernel's own package its PTX came from, and a hash of
// their text, recorded in the generated file so that a launch and kern
// check can tell when the kernel was edited after kern gen ran.

import (
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/internal/srchash"
)

// sourceFuncs returns "file.go:Name" (or "file.go:Type.Method") for fn and
// every function of the same package it calls, directly or not, and
// "file.go:const N" / "file.go:type T" for the package-level constants
// and types they use (and those that these use in turn).
func (c *pkgCtx) sourceFuncs(fn *ssa.Function) []string {
	seen := map[*ssa.Function]bool{}
	var out []string
	seenObj := map[types.Object]bool{}
	var genDecls map[types.Object]*ast.GenDecl
	var uses func(n ast.Node)
	uses = func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := c.info.Uses[id]
			if obj == nil || obj.Pkg() != c.pkg || obj.Parent() != c.pkg.Scope() || seenObj[obj] {
				return true
			}
			tok := ""
			switch obj.(type) {
			case *types.Const:
				tok = "const"
			case *types.TypeName:
				tok = "type"
			default:
				return true
			}
			seenObj[obj] = true
			out = append(out, filepath.Base(c.fset.Position(obj.Pos()).Filename)+":"+tok+" "+obj.Name())
			if genDecls == nil {
				genDecls = c.genDeclsByObject()
			}
			if gd := genDecls[obj]; gd != nil {
				uses(gd)
			}
			return true
		})
	}
	recorded := map[*ssa.Function]bool{}
	var walk func(f *ssa.Function)
	walk = func(f *ssa.Function) {
		// An instantiation of a generic helper is walked for its calls
		// (the origin's calls through a type parameter have no static
		// callee) and recorded as its origin, the code on disk.
		origin := f
		if o := f.Origin(); o != nil {
			origin = o
		}
		if seen[f] || origin.Pkg != c.ssaPkg || !origin.Pos().IsValid() {
			return
		}
		seen[f] = true
		if !recorded[origin] {
			recorded[origin] = true
			key := origin.Name()
			if recv := origin.Signature.Recv(); recv != nil {
				key = recvTypeName(recv.Type()) + "." + key
			}
			out = append(out, filepath.Base(c.fset.Position(origin.Pos()).Filename)+":"+key)
			if syn := origin.Syntax(); syn != nil {
				uses(syn)
			}
		}
		for _, b := range f.Blocks {
			for _, in := range b.Instrs {
				if call, ok := in.(ssa.CallInstruction); ok {
					if callee := call.Common().StaticCallee(); callee != nil {
						walk(callee)
					}
				}
			}
		}
	}
	walk(fn)
	sort.Strings(out)
	return out
}

// genDeclsByObject maps each package-level constant and type to the
// declaration (group) that declares it.
func (c *pkgCtx) genDeclsByObject() map[types.Object]*ast.GenDecl {
	m := map[types.Object]*ast.GenDecl{}
	for _, f := range c.files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, sp := range gd.Specs {
				switch sp := sp.(type) {
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						if obj := c.info.Defs[n]; obj != nil {
							m[obj] = gd
						}
					}
				case *ast.TypeSpec:
					if obj := c.info.Defs[sp.Name]; obj != nil {
						m[obj] = gd
					}
				}
			}
		}
	}
	return m
}

// sourceHash hashes the functions of k.Source; "" when a file cannot be
// read (a package compiled from memory without its files on disk).
func (c *pkgCtx) sourceHash(funcs []string, dir string) string {
	h, err := srchash.Sum(funcs, func(file string) ([]byte, error) {
		if src, ok := c.sources[file]; ok {
			return src, nil
		}
		return os.ReadFile(filepath.Join(dir, file))
	})
	if err != nil {
		return ""
	}
	return h
}

// recvTypeName is the name of a method's receiver type, as it is spelled
// in the declaration (without * or type arguments).
func recvTypeName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return types.TypeString(t, nil)
}
