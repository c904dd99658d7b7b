package main

import (
	"strings"
	"testing"

	"github.com/gokern/kern/compiler"
	"github.com/gokern/kern/internal/ptxas"
)

// TestEveryKernelInTheRepoAssembles compiles every package of the module
// that has kernels (ops, examples, internal test packages) and assembles
// each with ptxas, warnings and spills as errors: the portable packages
// for sm_80 and sm_90, and a package whose //kern:arch names an
// architecture-specific target (sm_90a: wgmma, setmaxnreg), which no
// other target can compile, for that target only.
func TestEveryKernelInTheRepoAssembles(t *testing.T) {
	path := ptxas.Require(t)
	if path == "" {
		return
	}
	regs := map[regKey]int{}
	ptx := map[regKey]string{} // each package's module by arch (kernel "")
	check := func(arch string, pkgs []*compiler.Package) {
		for _, p := range pkgs {
			ptx[regKey{strings.TrimPrefix(p.Path, "github.com/gokern/kern/"), "", arch}] = p.PTX
			reps := ptxas.Check(t, p.Name+"_"+arch, []byte(p.PTX), arch)
			for _, f := range reps[arch].Entries() {
				if f.Spills() {
					t.Errorf("%s %s.%s spills (%d bytes stored)", arch, p.Path, f.Name, f.SpillStores)
				}
				regs[regKey{strings.TrimPrefix(p.Path, "github.com/gokern/kern/"), f.Name, arch}] = f.Registers
			}
		}
	}
	// Each package at its own target: sm_80 unless it says otherwise.
	own, err := compiler.Compile(compiler.Config{Dir: "../.."}, "./...")
	if err != nil {
		t.Fatalf("own targets: %v", err)
	}
	if len(own) < 10 {
		t.Fatalf("only %d packages with kernels found", len(own))
	}
	var portable []string
	for _, p := range own {
		check(p.Arch, []*compiler.Package{p})
		if !strings.HasSuffix(p.Arch, "a") {
			portable = append(portable, p.Path)
		}
	}
	pkgs, err := compiler.Compile(compiler.Config{Arch: "sm_90", Dir: "../.."}, portable...)
	if err != nil {
		t.Fatalf("sm_90: %v", err)
	}
	if len(pkgs) != len(portable) {
		t.Fatalf("sm_90: %d packages compiled, want %d", len(pkgs), len(portable))
	}
	check("sm_90", pkgs)
	checkRegBudget(t, path, regs, ptx)
}
