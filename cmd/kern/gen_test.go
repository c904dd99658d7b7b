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

// TestCheckReportsStaleGeneratedCode: after a kernel is edited without
// running kern gen again, kern check fails, naming the file, the kernel
// and the command to run; kern gen makes it pass again.
func TestCheckReportsStaleGeneratedCode(t *testing.T) {
	dir := filepath.Join("testdata", "stale")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	src, err := os.ReadFile(filepath.Join("testdata", "good", "good.go"))
	if err != nil {
		t.Fatal(err)
	}
	src = []byte(strings.Replace(string(src), "package good", "package stale", 1))
	write := func(s []byte) {
		if err := os.WriteFile(filepath.Join(dir, "stale.go"), s, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(src)
	if code, _, errs := runKern(t, "gen", "./testdata/stale"); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, errs)
	}
	if code, _, errs := runKern(t, "check", "./testdata/stale"); code != 0 {
		t.Fatalf("check after gen: exit %d: %s", code, errs)
	}
	edited := strings.Replace(string(src), "x[i] *= a", "x[i] *= a + 1", 1)
	if edited == string(src) {
		t.Fatal("the edit did not apply; update the test to good.go")
	}
	write([]byte(edited))
	code, _, errs := runKern(t, "check", "./testdata/stale")
	if code != 1 {
		t.Errorf("check after an edit: exit %d, want 1", code)
	}
	for _, want := range []string{"stale_kern.go is stale", "[Scale]", "go generate ./testdata/stale"} {
		if !strings.Contains(errs, want) {
			t.Errorf("check's error lacks %q:\n%s", want, errs)
		}
	}
}

// TestCheckReportsEveryPackagesErrors: type errors of one package do not
// hide the others' (or the kern diagnostics of a package that
// type-checks).
func TestCheckReportsEveryPackagesErrors(t *testing.T) {
	code, _, errs := runKern(t, "check", "./testdata/typeerr", "./testdata/bad")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, want := range []string{"typeerr.go:9:20: undefined: undefinedA", "typeerr.go:12:26: undefined: undefinedB", "bad.go:8:9:", "DivergentBarrier", "UnsupportedClosure"} {
		if !strings.Contains(errs, want) {
			t.Errorf("errors lack %q:\n%s", want, errs)
		}
	}
}

// TestHelpListAndPTXNames: -h exits 0 and describes the arguments; kern
// list names each kernel as pkg.Kernel; kern ptx finds "dir.Kernel"
// without ./ and lists the kernels when the name is wrong.
func TestHelpListAndPTXNames(t *testing.T) {
	for _, cmd := range []string{"gen", "check", "ptx", "list", "bench", "prof"} {
		code, out, errs := runKern(t, cmd, "-h")
		if code != 0 || !strings.Contains(out+errs, "usage: kern "+cmd) {
			t.Errorf("kern %s -h: exit %d, %q", cmd, code, out+errs)
		}
	}
	code, out, errs := runKern(t, "list", "./testdata/good")
	if code != 0 || !strings.Contains(out, "testdata/good.Scale") || !strings.Contains(out, "good.go:6") || !strings.Contains(out, "block=64x1x1") || !strings.Contains(out, "(a float32, x []float32)") {
		t.Errorf("kern list: exit %d, %q %q", code, out, errs)
	}
	if code, out, errs := runKern(t, "ptx", "testdata/good.Scale"); code != 0 || !strings.Contains(out, ".entry Scale(") {
		t.Errorf("kern ptx testdata/good.Scale: exit %d, %q", code, errs)
	}
	if code, _, errs := runKern(t, "ptx", "./testdata/good.scale"); code != 1 || !strings.Contains(errs, "its kernels are Scale") {
		t.Errorf("kern ptx with a wrong name: exit %d, %q", code, errs)
	}
	if code, _, errs := runKern(t, "ptx", "Scale"); code != 1 || !strings.Contains(errs, "kern list") {
		t.Errorf("kern ptx without a package: exit %d, %q", code, errs)
	}
}
