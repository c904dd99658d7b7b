package compiler

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/tools/go/packages"
)

// GPUPath is the import path of the kernel language package.
const GPUPath = "github.com/gokern/kern/gpu"

const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
	packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports | packages.NeedDeps

// Compile loads the packages matching patterns and compiles every
// //kern:kernel func in them. Packages without kernels are omitted. The
// error, if any, is an ErrorList when the problem is in the source.
func Compile(cfg Config, patterns ...string) ([]*Package, error) {
	fset := token.NewFileSet()
	overlay, badSigs, err := stubOverlay(cfg, patterns)
	if err != nil {
		return nil, fmt.Errorf("compiler: loading %v: %w", patterns, err)
	}
	pcfg := &packages.Config{Mode: loadMode, Dir: cfg.Dir, Fset: fset, Overlay: overlay}
	pkgs, err := packages.Load(pcfg, append(patterns, libPaths...)...)
	if err != nil {
		return nil, fmt.Errorf("compiler: loading %v: %w", patterns, err)
	}
	// Every problem of every package is reported: load and type errors
	// of the packages that have them (and of what they import), and the
	// kern diagnostics of the packages that type-check.
	var all ErrorList
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if isLib(p.PkgPath) {
			return // no kernels; a kernel that needs a broken library fails there
		}
		for _, e := range p.Errors {
			msg := e.Msg
			if strings.Contains(msg, "missing go.sum entry") {
				msg += goSumHint
			}
			d := Diagnostic{Pos: parsePos(e.Pos), Code: "TypeError", Msg: msg}
			if len(badSigs) > 0 && strings.HasSuffix(d.Pos.Filename, "_kern.go") {
				// Follows from a kernel left out of the stub; the
				// signature is the cause, at the user's line.
				continue
			}
			all = append(all, d)
		}
	})
	broken := map[*packages.Package]bool{}
	for _, p := range pkgs {
		packages.Visit([]*packages.Package{p}, nil, func(q *packages.Package) {
			if len(q.Errors) > 0 && !isLib(q.PkgPath) {
				broken[p] = true
			}
		})
		if broken[p] {
			// The kernels of a package that does not type-check are not
			// compiled; report the signatures the stub could not declare.
			files := map[string]bool{}
			for _, f := range p.GoFiles {
				files[f] = true
			}
			for _, d := range badSigs {
				if files[d.Pos.Filename] {
					all = append(all, d)
				}
			}
		}
	}
	var libs []*sourcePkg
	for _, p := range pkgs {
		if isLib(p.PkgPath) && len(p.Errors) == 0 {
			libs = append(libs, &sourcePkg{p.Types, p.Syntax, p.TypesInfo})
		}
	}
	libs = append(libs, userLibraries(pkgs)...)
	var out []*Package
	for _, p := range pkgs {
		if isLib(p.PkgPath) || broken[p] {
			continue
		}
		cp, err := compileTyped(cfg, fset, p.Types, p.Syntax, p.TypesInfo, p.Dir, libs, nil)
		if err != nil {
			if el, ok := err.(ErrorList); ok {
				all = append(all, el...)
				continue
			}
			return nil, err
		}
		if cp != nil {
			out = append(out, cp)
		}
	}
	if len(all) > 0 {
		return nil, all.sorted()
	}
	return out, nil
}

// goSumHint follows a missing go.sum entry: the usual cause is a module
// whose code imports only package gpu so far, while the generated file
// (and so the compiler's load) imports package kern and its dependencies.
const goSumHint = "\n\tkern loads github.com/gokern/kern, which the generated file imports; add its dependencies to go.sum with\n\tgo mod edit -tool=github.com/gokern/kern/cmd/kern && go mod tidy\n\t(then run kern as `go tool kern gen`; README: \"Use kern in your own module\")"

func parsePos(s string) token.Position {
	var p token.Position
	// "file:line:col" — split from the right so Windows drive letters survive.
	var line, col int
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			if _, err := fmt.Sscanf(s[i+1:], "%d", &col); err == nil && line == 0 {
				rest := s[:i]
				for j := len(rest) - 1; j >= 0; j-- {
					if rest[j] == ':' {
						if _, err := fmt.Sscanf(rest[j+1:], "%d", &line); err == nil {
							p.Filename, p.Line, p.Column = rest[:j], line, col
							return p
						}
						break
					}
				}
			}
			break
		}
	}
	p.Filename = s
	return p
}

// std holds the type-checked packages a kernel source may import, loaded
// once per process for CompileSource.
var std struct {
	once sync.Once
	fset *token.FileSet
	pkgs map[string]*types.Package
	libs []*sourcePkg // libPaths, with syntax
	err  error
}

func loadStd() (map[string]*types.Package, error) {
	std.once.Do(func() {
		std.fset = token.NewFileSet()
		pkgs, err := packages.Load(&packages.Config{Mode: loadMode, Fset: std.fset},
			append([]string{GPUPath, "math", "math/bits", "unsafe"}, libPaths...)...)
		if err != nil {
			std.err = err
			return
		}
		std.pkgs = map[string]*types.Package{}
		packages.Visit(pkgs, nil, func(p *packages.Package) {
			if isLib(p.PkgPath) && len(p.Errors) == 0 {
				std.libs = append(std.libs, &sourcePkg{p.Types, p.Syntax, p.TypesInfo})
				if p.PkgPath == DevMathPath {
					return // kernel source calls it only through package gpu
				}
			}
			if len(p.Errors) > 0 && std.err == nil {
				std.err = fmt.Errorf("compiler: loading %s: %v", p.PkgPath, p.Errors[0])
			}
			std.pkgs[p.PkgPath] = p.Types
		})
		std.pkgs["unsafe"] = types.Unsafe
	})
	return std.pkgs, std.err
}

type mapImporter map[string]*types.Package

func (m mapImporter) Import(path string) (*types.Package, error) {
	if p, ok := m[path]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("kernels may import only %s, %s, math and math/bits (not %q)", GPUPath, TilePath, path)
}

// CompileSource compiles one file of kernel source, as if it were a
// package of its own importing only gpu, math and math/bits. Tests and the
// fuzz target use it; it avoids a go/packages load per call.
func CompileSource(cfg Config, filename string, src []byte) (*Package, error) {
	imp, err := loadStd()
	if err != nil {
		return nil, err
	}
	fset := std.fset
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	info := &types.Info{
		Types:        map[ast.Expr]types.TypeAndValue{},
		Defs:         map[*ast.Ident]types.Object{},
		Uses:         map[*ast.Ident]types.Object{},
		Implicits:    map[ast.Node]types.Object{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
		Scopes:       map[ast.Node]*types.Scope{},
		Instances:    map[*ast.Ident]types.Instance{},
		FileVersions: map[*ast.File]string{},
	}
	var terrs ErrorList
	tc := &types.Config{Importer: mapImporter(imp), GoVersion: "go1.26", Error: func(err error) {
		if te, ok := err.(types.Error); ok {
			terrs = append(terrs, Diagnostic{Pos: te.Fset.Position(te.Pos), Code: "TypeError", Msg: te.Msg})
		}
	}}
	pkg, _ := tc.Check(f.Name.Name, fset, []*ast.File{f}, info)
	if len(terrs) > 0 {
		return nil, terrs.sorted()
	}
	return compileTyped(cfg, fset, pkg, []*ast.File{f}, info, "", std.libs, map[string][]byte{filepath.Base(filename): src})
}
