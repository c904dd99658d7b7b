// Command kern is kern's command-line tool.
//
//	kern gen [-arch sm_80] [packages]     compile kernels, write <pkg>_kern.go and <pkg>_kern_<arch>.ptx (what go:generate runs)
//	kern ptx [-arch sm_80] pkg.Kernel     print a package's PTX (the module holding Kernel)
//	kern check [-arch sm_80] [packages]   compile kernels and report errors, writing nothing
//	kern doctor                           report the driver, GPUs, ptxas and the device kern.Open picks
//	kern prof [-o file] ./pkg [args]      run a program on the emulator, print its profile
//	kern bench [-device d] [-plot f.svg]  time memcpy, cuBLAS gemm and ops on a device
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
  check [-arch sm_80] [-v] [packages]  compile kernels and report errors without writing;
                                   -v assembles with ptxas and prints registers, spills, shared memory
  doctor                           report the driver, GPUs, ptxas and the device kern.Open picks
  prof  [-o file] [-check all] ./pkg [args]
                                   run a program on the emulator and print its profile
  bench [-device emu|cuda] [-plot out.svg] [memcpy] [gemm] [ops]
                                   time copies, cuBLAS GEMM and ops; -h lists the flags
  emu   run|list file.ptx [flags]  run any PTX (clang, nvcc, Triton) on the emulator; kern emu -h
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

var verbose bool

func flags(name string, args []string, stderr io.Writer) (*flag.FlagSet, *string, error) {
	fs := flag.NewFlagSet("kern "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	arch := fs.String("arch", "", "PTX target: sm_70 … sm_90a (default sm_80)")
	if name == "check" {
		fs.BoolVar(&verbose, "v", false, "assemble with ptxas and print registers, spills and shared memory per kernel")
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
		return fmt.Errorf("usage: kern ptx [-arch sm_80] pkg.Kernel (e.g. ./examples/hello.FusedSiluGate)")
	}
	target := fs.Arg(0)
	dot := -1
	for i := len(target) - 1; i >= 0; i-- {
		if target[i] == '.' {
			dot = i
			break
		}
		if target[i] == '/' {
			break
		}
	}
	if dot <= 0 {
		return fmt.Errorf("kern ptx: %q is not pkg.Kernel", target)
	}
	pkg, name := target[:dot], target[dot+1:]
	pkgs, err := compiler.Compile(compiler.Config{Arch: *arch}, pkg)
	if err != nil {
		return err
	}
	for _, p := range pkgs {
		for _, k := range p.Kernels {
			if k.Name == name {
				fmt.Fprint(stdout, p.PTX)
				return nil
			}
		}
	}
	return fmt.Errorf("kern ptx: no kernel %s in %s", name, pkg)
}
