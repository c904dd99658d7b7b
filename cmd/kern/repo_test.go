package main

import (
	"strings"
	"testing"

	"github.com/gokern/kern/compiler"
	"github.com/gokern/kern/internal/ptxas"
)

// TestEveryKernelInTheRepoAssembles compiles every package of the module
// that has kernels (ops, examples, internal test packages) for sm_80 and
// sm_90 and assembles each with ptxas, warnings and spills as errors. A
// package marked //kern:arch with an architecture-specific target
// (sm_90a: wgmma) compiles for that target only, and is assembled for it.
func TestEveryKernelInTheRepoAssembles(t *testing.T) {
	ptxas.Require(t)
	var portable []string
	for _, arch := range []string{"", "sm_90"} {
		// "" is each package's own target: sm_80 unless //kern:arch says.
		patterns := []string{"./..."}
		if arch != "" {
			patterns = portable
		}
		pkgs, err := compiler.Compile(compiler.Config{Arch: arch, Dir: "../.."}, patterns...)
		if err != nil {
			t.Fatalf("%q: %v", arch, err)
		}
		if len(pkgs) < 10 {
			t.Fatalf("%q: only %d packages with kernels found", arch, len(pkgs))
		}
		for _, p := range pkgs {
			if arch == "" && !strings.HasSuffix(p.Arch, "a") {
				portable = append(portable, p.Path)
			}
			reps := ptxas.Check(t, p.Name+"_"+p.Arch, []byte(p.PTX), p.Arch)
			for _, f := range reps[p.Arch].Entries() {
				if f.Spills() {
					t.Errorf("%s %s.%s spills (%d bytes stored)", p.Arch, p.Path, f.Name, f.SpillStores)
				}
			}
		}
	}
}
