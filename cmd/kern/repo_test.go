package main

import (
	"testing"

	"github.com/gokern/kern/compiler"
	"github.com/gokern/kern/internal/ptxas"
)

// TestEveryKernelInTheRepoAssembles compiles every package of the module
// that has kernels (ops, examples, internal test packages) for sm_80 and
// sm_90 and assembles each with ptxas, warnings and spills as errors.
func TestEveryKernelInTheRepoAssembles(t *testing.T) {
	ptxas.Require(t)
	for _, arch := range []string{"sm_80", "sm_90"} {
		pkgs, err := compiler.Compile(compiler.Config{Arch: arch, Dir: "../.."}, "./...")
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		if len(pkgs) < 10 {
			t.Fatalf("%s: only %d packages with kernels found", arch, len(pkgs))
		}
		for _, p := range pkgs {
			reps := ptxas.Check(t, p.Name+"_"+arch, []byte(p.PTX), arch)
			for _, f := range reps[arch].Entries() {
				if f.Spills() {
					t.Errorf("%s %s.%s spills (%d bytes stored)", arch, p.Path, f.Name, f.SpillStores)
				}
			}
		}
	}
}
