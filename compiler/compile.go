package compiler

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/gokern/kern/compiler/ir"
	"github.com/gokern/kern/compiler/ptx"
)

// pkgCtx is the state shared by every kernel of one package.
type pkgCtx struct {
	cfg  Config
	tgt  target
	fset *token.FileSet
	pkg  *types.Package
	info *types.Info
	// libInfo holds the type information of the library packages whose
	// bodies are compiled (gpu/tile, devmath), for syntax in them.
	libInfo []*types.Info
	// layouts is each tile kernel's tile layouts (tilelayout.go).
	layouts map[*ast.FuncDecl][]string
	files   []*ast.File
	d       *diags
	prog    *ssa.Program
	ssaPkg  *ssa.Package
	mod     *ir.Module
	// entries32 counts the 32-bit entries in mod.Funcs (index32.go).
	entries32 int
	version   int // highest PTX ISA version ×10 a feature needs
	// analyzing guards the uniformity analysis against recursive helpers
	// (which lowering reports).
	analyzing map[*ssa.Function]bool
	// uniMemo caches uniformity results by function and argument levels:
	// a helper called from many sites (or helpers calling each other
	// several times each) is analysed once per distinct input.
	uniMemo map[uniKey]*uniformity
	// userLibs holds the import paths of the kernel libraries
	// (library.go) among the libraries compiled with the package.
	userLibs map[string]bool
	// userLibInfo is each kernel library's type information, for the
	// subset check of its functions (library.go).
	userLibInfo map[string]*types.Info
	// devmathPkg is package devmath built with bodies, for inlining.
	devmathPkg *ssa.Package
	// unroll holds the positions of for statements marked //kern:unroll.
	unroll map[token.Pos]bool
	// unrollBy holds the factor of those marked //kern:unroll N.
	unrollBy map[token.Pos]int
	// nounroll holds the positions of for statements marked
	// //kern:nounroll (nounroll.go).
	nounroll map[token.Pos]bool
	// checked records helpers already subset-checked.
	checked map[*ast.FuncDecl]bool
	// sources holds file text by base name when the files are not on disk.
	sources map[string][]byte
}

// need records that a feature requires PTX ISA version v (×10) and target
// sm; it reports an error at pos if the selected target is older.
func (c *pkgCtx) need(pos token.Pos, what string, version, sm int) bool {
	if c.tgt.sm < sm {
		c.d.errorf(pos, UnsupportedTarget, "%s needs sm_%d or newer; compiling for %s (use -arch)", what, sm, c.tgt.name)
		return false
	}
	c.version = max(c.version, version)
	return true
}

// sourcePkg is a type-checked package with its syntax.
type sourcePkg struct {
	types *types.Package
	files []*ast.File
	info  *types.Info
}

// sources, when not nil, holds the text of files that are not on disk
// (CompileSource), by base name, for the kernels' source hashes.
func compileTyped(cfg Config, fset *token.FileSet, pkg *types.Package, files []*ast.File, info *types.Info, dir string, libs []*sourcePkg, sources map[string][]byte) (*Package, error) {
	arch := cfg.arch()
	if cfg.Arch == "" {
		if a, err := packageArch(fset, files); err != nil {
			return nil, err
		} else if a != "" {
			arch = a
			cfg.Arch = a
		}
	}
	tgt, err := lookupTarget(arch)
	if err != nil {
		return nil, err
	}
	c := &pkgCtx{cfg: cfg, tgt: tgt, fset: fset, pkg: pkg, info: info, files: files,
		d: &diags{fset: fset}, analyzing: map[*ssa.Function]bool{}, unroll: map[token.Pos]bool{}, unrollBy: map[token.Pos]int{}, nounroll: map[token.Pos]bool{},
		checked: map[*ast.FuncDecl]bool{}, version: tgt.ptxVersion, sources: sources}
	type found struct {
		decl *ast.FuncDecl
		dir  directive
	}
	var kernels []found
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if cm := kernelDirectiveOf(fd); cm != nil {
				dir := parseDirective(c.d, cm)
				if fd.Recv != nil {
					// ssaPkg.Func finds package-level funcs only: without
					// this a method kernel would be skipped in silence.
					c.d.list = append(c.d.list, syntaxSignatureErrors(fset, fd)...)
					continue
				}
				kernels = append(kernels, found{fd, dir})
			}
		}
		c.collectUnroll(f)
		c.checkDirectives(f)
	}
	if len(kernels) > 0 {
		decls := make([]*ast.FuncDecl, len(kernels))
		blocks := make([][3]int, len(kernels))
		for i, k := range kernels {
			decls[i], blocks[i] = k.decl, k.dir.block
		}
		c.checkPartitions(decls, blocks)
	}
	if len(kernels) == 0 {
		if len(c.d.list) > 0 {
			return nil, c.d.list.sorted()
		}
		return nil, nil
	}

	c.prog = ssa.NewProgram(fset, ssa.InstantiateGenerics)
	created := map[*types.Package]bool{}
	var create func(p *types.Package)
	create = func(p *types.Package) {
		if created[p] {
			return
		}
		created[p] = true
		for _, imp := range p.Imports() {
			create(imp)
		}
		if p != pkg {
			c.prog.CreatePackage(p, nil, nil, true)
		}
	}
	// The library packages (libPaths) are created with their bodies
	// before the kernel package's imports, which would otherwise create
	// them without.
	c.userLibs, c.userLibInfo = map[string]bool{}, map[string]*types.Info{}
	for _, lib := range libs {
		if lib != nil && !isLib(lib.types.Path()) {
			c.userLibs[lib.types.Path()] = true
			c.userLibInfo[lib.types.Path()] = lib.info
		}
	}
	var built []*ssa.Package
	for _, lib := range libs {
		if lib == nil || lib.types.Path() == pkg.Path() || created[lib.types] {
			continue
		}
		for _, imp := range lib.types.Imports() {
			if !c.isLib(imp.Path()) {
				create(imp)
			}
		}
		created[lib.types] = true
		c.libInfo = append(c.libInfo, lib.info)
		sp := c.prog.CreatePackage(lib.types, lib.files, lib.info, true)
		built = append(built, sp)
		if lib.types.Path() == DevMathPath {
			c.devmathPkg = sp
		} else {
			for _, f := range lib.files {
				c.collectUnrollIn(f, false)
			}
		}
	}
	create(pkg)
	c.ssaPkg = c.prog.CreatePackage(pkg, files, info, false)
	c.ssaPkg.Build()
	for _, sp := range built {
		sp.Build()
	}

	c.mod = &ir.Module{Target: tgt.name, FileIndex: map[string]int{}}
	c.mod.Vars = append(c.mod.Vars, &ir.Var{Name: ErrorSlot, Space: ir.Global, Align: 16, Size: ErrorSlotBytes})
	out := &Package{Path: pkg.Path(), Name: pkg.Name(), Dir: dir, Arch: tgt.name, Module: c.mod}
	for _, k := range kernels {
		fn := c.ssaPkg.Func(k.decl.Name.Name)
		if fn == nil {
			continue
		}
		if kern := c.compileKernel(fn, k.decl, k.dir); kern != nil {
			kern.Source = c.sourceFuncs(fn)
			kern.SourceHash = c.sourceHash(kern.Source, dir)
			out.Kernels = append(out.Kernels, kern)
		}
	}
	if len(c.d.list) > 0 {
		return nil, c.d.list.sorted()
	}
	for _, f := range c.mod.Funcs {
		if err := ir.Compile(f, true); err != nil {
			return nil, fmt.Errorf("compiler: internal error in kernel %s: %v", f.Name, err)
		}
	}
	c.mod.Version = fmt.Sprintf("%d.%d", c.version/10, c.version%10)
	var pos ptx.Position
	if !cfg.NoLineInfo {
		pos = c.linePositions()
	}
	out.PTX = ptx.Print(c.mod, pos)
	return out, nil
}

// linePositions numbers the source files that instructions come from and
// returns the resolver the printer uses for .loc.
func (c *pkgCtx) linePositions() ptx.Position {
	seen := map[string]bool{}
	var names []string
	for _, f := range c.mod.Funcs {
		for _, b := range f.Blocks {
			for _, in := range b.Instrs {
				if in.Pos.IsValid() {
					p := c.fset.Position(in.Pos)
					if !seen[p.Filename] {
						seen[p.Filename] = true
						names = append(names, p.Filename)
					}
				}
			}
		}
	}
	sort.Strings(names)
	for i, n := range names {
		c.mod.FileIndex[n] = i + 1
		c.mod.Files = append(c.mod.Files, filepath.Base(n))
	}
	return func(in *ir.Instr) (string, int, int, bool) {
		if !in.Pos.IsValid() {
			return "", 0, 0, false
		}
		p := c.fset.Position(in.Pos)
		return p.Filename, p.Line, p.Column, true
	}
}

// ptxIdent makes a Go identifier a valid PTX identifier (PTX ISA §4.4:
// [a-zA-Z_$][a-zA-Z0-9_$]*).
func ptxIdent(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "_u%04x", r)
		}
	}
	return b.String()
}
