// Command kern is kern's command-line tool.
//
//	kern gen [-arch sm_80] [packages]     compile kernels, write <pkg>_kern.go (what go:generate runs)
//	kern ptx [-arch sm_80] pkg.Kernel     print a package's PTX (the module holding Kernel)
//	kern check [-arch sm_80] [packages]   compile kernels and report errors, writing nothing
//	kern doctor                           report the driver, GPUs, ptxas and the device kern.Open picks
//	kern prof [-o file] ./pkg [args]      run a program on the emulator, print its profile
//	kern bench [-device d] [-plot f.svg]  time memcpy, cuBLAS gemm and ops on a device
//
// Packages are go list patterns; the default is the current directory.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gokern/kern/compiler"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: kern <command> [arguments]

commands:
  gen   [-arch sm_80] [packages]   compile kernels and write <pkg>_kern.go next to them
  ptx   [-arch sm_80] pkg.Kernel   print the PTX of the package holding Kernel
  check [-arch sm_80] [-v] [packages]  compile kernels and report errors without writing;
                                   -v assembles with ptxas and prints registers, spills, shared memory
  doctor                           report the driver, GPUs, ptxas and the device kern.Open picks
  prof  [-o file] [-check all] ./pkg [args]
                                   run a program on the emulator and print its profile
  bench [-device emu|cuda] [-plot out.svg] [memcpy] [gemm] [ops]
                                   time copies, cuBLAS GEMM and ops; -h lists the flags
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

var verbose, bce bool

func flags(name string, args []string, stderr io.Writer) (*flag.FlagSet, *string, error) {
	fs := flag.NewFlagSet("kern "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
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
	for _, p := range pkgs {
		src, err := compiler.Generate(p)
		if err != nil {
			return err
		}
		if !write {
			fmt.Fprintf(stdout, "%s: %d kernels ok\n", p.Path, len(p.Kernels))
			if bce {
				keptChecks(stdout, p)
			}
			if verbose {
				if err := assembleReport(stdout, p); err != nil {
					return err
				}
			}
			continue
		}
		path := p.Dir + string(os.PathSeparator) + compiler.GeneratedFileName(p)
		if old, err := os.ReadFile(path); err == nil && string(old) == string(src) {
			continue
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			return fmt.Errorf("kern gen: %w", err)
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
