package compiler

// FuzzCompile compiles arbitrary source: the compiler must return a
// package or an error for every input, never panic. The seeds are every
// testdata kernel and rejected kernel; regressions found by fuzzing live in
// testdata/fuzz/FuzzCompile.

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzCompile(f *testing.F) {
	var seeds []string
	for _, pat := range []string{"*.go", "errors/*.go", "errpkg/*.go"} {
		m, err := filepath.Glob(filepath.Join("testdata", pat))
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, m...)
	}
	if len(seeds) == 0 {
		f.Fatal("no seed files in testdata")
	}
	for _, path := range seeds {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, false)
	}
	f.Fuzz(func(t *testing.T, src []byte, sm75 bool) {
		cfg := Config{}
		if sm75 {
			cfg.Arch = "sm_75" // the oldest-target paths (no mma, bf16 by hand)
		}
		// No recover: a panic anywhere in the compiler fails the input.
		p, err := CompileSource(cfg, "fuzz.go", src)
		if err == nil && p != nil && len(p.Kernels) > 0 && p.PTX == "" {
			t.Errorf("compiled %d kernels to no PTX", len(p.Kernels))
		}
	})
}
