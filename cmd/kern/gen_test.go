package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadSignaturesAtTheUsersLine: a generic kernel, a [][]T parameter and
// a method marked //kern:kernel are each a BadKernelSignature at the
// kernel's own line, not a type error in the generated file, and kern gen
// writes nothing.
func TestBadSignaturesAtTheUsersLine(t *testing.T) {
	for _, tc := range []struct{ pkg, pos, msg string }{
		{"generic", "k.go:8:6:", "not a method or generic func"},
		{"nested", "k.go:7:26:", "kernel parameter x has type [][]float32"},
		{"method", "k.go:9:10:", "not a method"},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			dir := filepath.Join("testdata", "badsig", tc.pkg)
			code, _, errs := runKern(t, "gen", "./"+filepath.ToSlash(dir))
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if !strings.Contains(errs, tc.pos) || !strings.Contains(errs, tc.msg) || !strings.Contains(errs, "[BadKernelSignature]") {
				t.Errorf("errors lack %s %q [BadKernelSignature]:\n%s", tc.pos, tc.msg, errs)
			}
			if strings.Contains(errs, "_kern.go") {
				t.Errorf("an error points into the generated file:\n%s", errs)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.Name() != "k.go" {
					t.Errorf("kern gen wrote %s", e.Name())
					os.Remove(filepath.Join(dir, e.Name()))
				}
			}
		})
	}
}
