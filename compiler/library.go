package compiler

// Kernel libraries: packages whose functions the kernels of other
// packages may call. Go code is shared through packages, and kernel code
// should be too: device helpers (a block reduction, a tile loader, a
// decode step's phases) written once and called from kernels anywhere.
// A package opts in with a line
//
//	//kern:library
//
// among the comments of any of its files (by convention above the package
// clause). Its function bodies are then built into the kernel package's
// SSA program and inlined like the package's own helpers, as the compiler
// does for gpu/tile and devmath, and its functions are subject to the
// same rules (the kernel subset, uniform barriers) where kernels call
// them. A library may import package gpu, gpu/tile and other libraries.
//
// What a kernel library is not: its functions are compiled into every
// kernel that calls them (there is no device-side linking), and a
// generated file records the hash of its own package's sources only, so
// after changing a library, run go generate in the packages that use it
// (CI's generated-files check catches a stale one).

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/packages"
)

// LibraryDirective marks a package as a kernel library.
const LibraryDirective = "//kern:library"

// isLibraryFiles reports whether one of files carries LibraryDirective.
func isLibraryFiles(files []*ast.File) bool {
	for _, f := range files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.TrimSpace(c.Text) == LibraryDirective {
					return true
				}
			}
		}
	}
	return false
}

// userLibraries returns the kernel libraries the packages pkgs import,
// directly or not, each after the libraries it imports (so that building
// one finds its dependencies built with bodies).
func userLibraries(pkgs []*packages.Package) []*sourcePkg {
	var out []*sourcePkg
	seen := map[string]bool{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if seen[p.PkgPath] || isLib(p.PkgPath) || len(p.Errors) > 0 || p.Types == nil {
			return
		}
		seen[p.PkgPath] = true
		if isLibraryFiles(p.Syntax) {
			out = append(out, &sourcePkg{p.Types, p.Syntax, p.TypesInfo})
		}
	})
	return out
}

// isLib reports whether path is a library whose bodies this package's
// kernels inline: kern's own (libPaths) or a kernel library it imports.
func (c *pkgCtx) isLib(path string) bool { return isLib(path) || c.userLibs[path] }

// ownOrLib reports whether p is the kernel package or a library.
func (c *pkgCtx) ownOrLib(p interface{ Path() string }) bool {
	return p != nil && (p.Path() == c.pkg.Path() || c.isLib(p.Path()))
}

// checkLibrarySubset runs the subset check (subset.go) over fd, a function
// of kernel library p a kernel calls, with the library's type
// information, and says whether it passed. Functions of other packages
// pass (kern's own libraries are trusted; the kernel's package has its own
// check).
func (c *pkgCtx) checkLibrarySubset(p *types.Package, fd *ast.FuncDecl) bool {
	if p == nil || !c.userLibs[p.Path()] || p.Path() == c.pkg.Path() {
		return true
	}
	info := c.userLibInfo[p.Path()]
	if info == nil {
		return true
	}
	saved := c.info
	c.info = info
	defer func() { c.info = saved }()
	return c.checkSubset(fd)
}
