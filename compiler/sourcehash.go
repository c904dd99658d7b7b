package compiler

// The source fingerprint of each kernel (see internal/srchash): which
// functions of the kernel's own package its PTX came from, and a hash of
// their text, recorded in the generated file so that a launch and kern
// check can tell when the kernel was edited after kern gen ran.

import (
	"go/types"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/internal/srchash"
)

// sourceFuncs returns "file.go:Name" (or "file.go:Type.Method") for fn and
// every function of the same package it calls, directly or not.
func (c *pkgCtx) sourceFuncs(fn *ssa.Function) []string {
	seen := map[*ssa.Function]bool{}
	var out []string
	var walk func(f *ssa.Function)
	walk = func(f *ssa.Function) {
		if o := f.Origin(); o != nil {
			f = o
		}
		if seen[f] || f.Pkg != c.ssaPkg || !f.Pos().IsValid() {
			return
		}
		seen[f] = true
		key := f.Name()
		if recv := f.Signature.Recv(); recv != nil {
			key = recvTypeName(recv.Type()) + "." + key
		}
		out = append(out, filepath.Base(c.fset.Position(f.Pos()).Filename)+":"+key)
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
