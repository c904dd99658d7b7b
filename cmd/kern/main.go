// Command kern is kern's command-line tool.
//
//	kern gen [-arch sm_80] [packages]     compile kernels, write <pkg>_kern.go and <pkg>_kern_<arch>.ptx (what go:generate runs)
//	kern ptx [-arch sm_80] pkg.Kernel     print a package's PTX (the module holding Kernel)
//	kern list [packages]                  list the kernels of packages
//	kern check [-arch sm_80] [packages]   compile kernels and report errors, writing nothing
//	kern doctor                           report the driver, GPUs, ptxas and the device kern.Open picks
//	kern prof [-latency] ./pkg [args]     run a program on the emulator, print its profile
//	kern bench [-device d] [-json f]      time memcpy, matmul (vs cuBLAS, decode GEMVs), ops and attention
//	kern emu run file.ptx [flags]         run any PTX on the emulator (emu.go)
//
// Packages are go list patterns; the default is the current directory.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/gokern/kern/compiler"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: kern <command> [arguments]

commands:
  gen   [-arch sm_80] [packages]   compile kernels and write <pkg>_kern.go and
                                   <pkg>_kern_<arch>.ptx (which the .go file embeds) next to them
  ptx   [-arch sm_80] pkg.Kernel   print the PTX of the package holding Kernel
  list  [packages]                 list the kernels of packages, as pkg.Kernel
  check [-arch sm_80] [-v] [packages]  compile kernels and report errors without writing;
                                   -v assembles with ptxas and prints registers, spills, shared memory
  doctor                           report the driver, GPUs, ptxas and the device kern.Open picks
  prof  [-o file] [-check all] [-latency] ./pkg [args]
                                   run a program on the emulator and print its profile
  bench [-device emu|cuda] [-json out.json] [memcpy] [gemm] [ops]
                                   time copies, cuBLAS GEMM and ops; -h lists the flags
  emu   run|list file.ptx [flags]  run any PTX (clang, nvcc, Triton) on the emulator

kern <command> -h describes a command and its arguments.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "gen":
		err = gen(rest, stdout, stderr, true)
	case "check":
		err = gen(rest, stdout, stderr, false)
	case "ptx":
		err = ptxCmd(rest, stdout, stderr)
	case "list":
		err = listCmd(rest, stdout, stderr)
	case "doctor":
		err = doctor(stdout)
	case "prof":
		err = prof(rest, stdout, stderr)
	case "bench":
		err = bench(rest, stdout, stderr)
	case "emu":
		err = emuCmd(rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "kern: unknown command %q\n%s", cmd, usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0 // -h: the flag set printed the command's usage
	}
	if err != nil {
		var el compiler.ErrorList
		if errors.As(err, &el) {
			for _, d := range el {
				fmt.Fprintln(stderr, d.Error())
			}
		} else {
			fmt.Fprintln(stderr, err)
		}
		return 1
	}
	return 0
}

var verbose, bce bool

// commandHelp is what -h prints for the compiling commands: the
// arguments, then what the command does.
var commandHelp = map[string]string{
	"gen": `usage: kern gen [-arch sm_80] [packages]

Compiles the //kern:kernel funcs of each package and writes, next to them,
<pkg>_kern_<arch>.ptx (the PTX) and <pkg>_kern.go (which embeds it and
declares a typed launcher per kernel). Packages are go list patterns
(./..., ./ops, github.com/you/mod/kernels); the default is ".". Nothing
is written unless every package compiles.`,
	"check": `usage: kern check [-arch sm_80] [-v] [packages]

Compiles the kernels of each package and reports every error, writing
nothing; fails if a package's generated file is older than its kernels'
source. -v also assembles with ptxas and prints registers, spills and
shared memory per kernel. Packages are go list patterns (default ".").`,
	"ptx": `usage: kern ptx [-arch sm_80] pkg.Kernel

Prints the PTX module of the package holding Kernel. pkg is a directory
(./ops, ./examples/hello) or an import path; "ops.Softmax" is tried as
./ops too. kern list shows the kernels a package has.`,
	"list": `usage: kern list [packages]

Lists each kernel of the packages as pkg.Kernel, with its position, block
shape and parameters. Packages are go list patterns (default ".").`,
}

func flags(name string, args []string, stderr io.Writer) (*flag.FlagSet, *string, error) {
	fs := flag.NewFlagSet("kern "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), commandHelp[name])
		fmt.Fprintln(fs.Output(), "\nflags:")
		fs.PrintDefaults()
	}
	arch := fs.String("arch", "", "PTX target: sm_70 … sm_90a (default sm_80)")
	if name == "check" {
		fs.BoolVar(&verbose, "v", false, "assemble with ptxas and print registers, spills, shared memory and bounds checks per kernel")
		fs.BoolVar(&bce, "bce", false, "print the position of each bounds check the kernels keep (like go build -gcflags=-d=ssa/check_bce)")
	}
	return fs, arch, fs.Parse(args)
}

func gen(args []string, stdout, stderr io.Writer, write bool) error {
	name := "gen"
	if !write {
		name = "check"
	}
	fs, arch, err := flags(name, args, stderr)
	if err != nil {
		return err
	}
	patterns := fs.Args()
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	pkgs, err := compiler.Compile(compiler.Config{Arch: *arch}, patterns...)
	if err != nil {
		return err
	}
	if len(pkgs) == 0 {
		fmt.Fprintf(stderr, "kern %s: no //kern:kernel functions in %v\n", name, patterns)
	}
	// Generate every package before writing any, so that a failure
	// leaves every file as it was.
	srcs := make([][]byte, len(pkgs))
	for i, p := range pkgs {
		if srcs[i], err = compiler.Generate(p); err != nil {
			return err
		}
	}
	if !write {
		var stale []error
		for _, p := range pkgs {
			if err := checkGenerated(p); err != nil {
				stale = append(stale, err)
			} else {
				fmt.Fprintf(stdout, "%s: %d kernels ok\n", p.Path, len(p.Kernels))
			}
			if bce {
				keptChecks(stdout, p)
			}
			if verbose {
				if err := assembleReport(stdout, p); err != nil {
					return err
				}
			}
		}
		return errors.Join(stale...)
	}
	for i, p := range pkgs {
		if err := writeGenerated(p, srcs[i]); err != nil {
			return fmt.Errorf("kern gen: %w", err)
		}
	}
	return nil
}

// writeGenerated writes a package's PTX file and Go file (unchanged files
// are not touched) and removes the PTX files of other arches that an
// earlier kern gen -arch left.
func writeGenerated(p *compiler.Package, src []byte) error {
	ptxName := compiler.PTXFileName(p)
	files := []struct {
		name string
		data []byte
	}{{ptxName, []byte(p.PTX)}, {compiler.GeneratedFileName(p), src}}
	for _, f := range files {
		path := filepath.Join(p.Dir, f.name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, f.data) {
			continue
		}
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			return err
		}
	}
	old, _ := filepath.Glob(filepath.Join(p.Dir, p.Name+"_kern_sm_*.ptx"))
	for _, path := range old {
		if filepath.Base(path) != ptxName {
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	return nil
}

func ptxCmd(args []string, stdout, stderr io.Writer) error {
	fs, arch, err := flags("ptx", args, stderr)
	if err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: kern ptx [-arch sm_80] pkg.Kernel (e.g. ./examples/hello.FusedSiluGate; kern list ./pkg shows a package's kernels)")
	}
	target := fs.Arg(0)
	dot := strings.LastIndexByte(target, '.')
	if dot <= 0 || strings.ContainsRune(target[dot:], '/') {
		return fmt.Errorf("kern ptx: %q is not pkg.Kernel: name a package and one of its kernels, e.g. ./examples/hello.FusedSiluGate (kern list ./pkg shows a package's kernels)", target)
	}
	pkg, name := target[:dot], target[dot+1:]
	pkgs, err := compileNamed(compiler.Config{Arch: *arch}, pkg)
	if err != nil {
		return err
	}
	var names []string
	for _, p := range pkgs {
		for _, k := range p.Kernels {
			if k.Name == name {
				fmt.Fprint(stdout, p.PTX)
				return nil
			}
			names = append(names, k.Name)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("kern ptx: no kernels in %s", pkg)
	}
	return fmt.Errorf("kern ptx: no kernel %s in %s; its kernels are %s", name, pkg, strings.Join(names, ", "))
}

// compileNamed compiles the package a user named: a pattern go list
// understands or, when that matches nothing, the same path under the
// current directory (so that "ops" finds ./ops).
func compileNamed(cfg compiler.Config, pkg string) ([]*compiler.Package, error) {
	pkgs, err := compiler.Compile(cfg, pkg)
	if err == nil && len(pkgs) > 0 || strings.HasPrefix(pkg, ".") || filepath.IsAbs(pkg) {
		return pkgs, err
	}
	if st, serr := os.Stat(pkg); serr == nil && st.IsDir() {
		return compiler.Compile(cfg, "./"+filepath.ToSlash(pkg))
	}
	return pkgs, err
}

func listCmd(args []string, stdout, stderr io.Writer) error {
	fs, arch, err := flags("list", args, stderr)
	if err != nil {
		return err
	}
	patterns := fs.Args()
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	var pkgs []*compiler.Package
	for _, pat := range patterns {
		ps, err := compileNamed(compiler.Config{Arch: *arch}, pat)
		if err != nil {
			return err
		}
		pkgs = append(pkgs, ps...)
	}
	if len(pkgs) == 0 {
		fmt.Fprintf(stderr, "kern list: no //kern:kernel functions in %v\n", patterns)
	}
	tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	for _, p := range pkgs {
		for _, k := range p.Kernels {
			block := "-"
			if k.Block != [3]int{} {
				block = fmt.Sprintf("block=%dx%dx%d", k.Block[0], k.Block[1], k.Block[2])
			}
			var params []string
			for _, prm := range k.Params {
				t := prm.GoType
				if prm.Kind == compiler.Slice {
					t = "[]" + t
				}
				params = append(params, prm.Name+" "+t)
			}
			fmt.Fprintf(tw, "%s.%s\t%s:%d\t%s\t(%s)\n", p.Path, k.Name, filepath.Base(k.Pos.Filename), k.Pos.Line, block, strings.Join(params, ", "))
		}
	}
	return tw.Flush()
}
