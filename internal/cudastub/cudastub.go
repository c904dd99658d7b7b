// Package cudastub builds the fake driver libraries kern's tests run the
// CUDA device on: package cuda's stub libcuda (cuda/testdata/stub) and
// package nccl's stub libnccl, compiled from their C sources into the
// test's temporary directory. Without a C compiler a test skips, except
// in CI (CI=true), where it fails: a skipped test is not a passing one.
package cudastub

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gokern/kern/internal/fixture"
)

// Libcuda builds the stub libcuda and returns its path, for KERN_LIBCUDA.
func Libcuda(t testing.TB) string {
	t.Helper()
	return Build(t, "libcuda_stub.so", filepath.Join("cuda", "testdata", "stub"))
}

// Build compiles the C sources of srcDir (relative to the module root)
// into a shared library named name in t's temporary directory.
func Build(t testing.TB, name, srcDir string) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no C compiler to build %s: %v", name, err)
		}
		t.Skipf("no C compiler to build %s: %v", name, err)
	}
	root, err := fixture.ModuleRoot()
	if err != nil {
		t.Fatalf("building %s: the module root: %v", name, err)
	}
	srcs, _ := filepath.Glob(filepath.Join(root, srcDir, "*.c"))
	if len(srcs) == 0 {
		t.Fatalf("building %s: no C sources in %s", name, srcDir)
	}
	out := filepath.Join(t.TempDir(), name)
	args := append([]string{"-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-o", out}, srcs...)
	if b, err := exec.Command(cc, append(args, "-lm", "-lpthread")...).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, b)
	}
	return out
}
