package ptxas

// Test helpers: skip without ptxas locally, fail without it in CI.

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxpatch"
)

// DefaultArchs are the architectures Check assembles for when given none:
// the oldest kern supports (Ampere) and Hopper.
var DefaultArchs = []string{"sm_80", "sm_90"}

// inCI reports whether $CI says this is a CI run (CI=true, as CI systems
// and .ci/run set it).
func inCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// Require returns the path of ptxas, or ends the test without it: under
// CI=true it fails the test, since a CI run that assembles nothing proves
// nothing; otherwise it skips the test with a message saying how to get
// ptxas. A $KERN_PTXAS that names no executable always fails the test.
func Require(t testing.TB) string {
	t.Helper()
	path, err := Find()
	switch {
	case err == nil:
		return path
	case !errors.Is(err, ErrNotFound):
		t.Fatalf("%v", err)
	case inCI():
		t.Fatalf("ptxas not found and CI=true: run scripts/fetch-ptxas.sh and export KERN_PTXAS=<the path it prints> (%v)", err)
	default:
		t.Skipf("ptxas not found: run scripts/fetch-ptxas.sh (or set KERN_PTXAS) to assemble PTX in tests")
	}
	return ""
}

// Check assembles ptx for each arch (DefaultArchs if none) and returns the
// reports by arch. name identifies the module in failure messages; it is
// also the PTX file name ptxas's messages refer to, with ".ptx" added when
// it is a plain name without one. Every arch is tried; if any fails, the
// test fails with ptxas's messages and the quoted PTX lines. Without ptxas,
// Check behaves as Require.
func Check(t testing.TB, name string, ptx []byte, archs ...string) map[string]*Report {
	t.Helper()
	path := Require(t)
	if path == "" {
		return nil // Require skipped or failed the test
	}
	if len(archs) == 0 {
		archs = DefaultArchs
	}
	reports := make(map[string]*Report, len(archs))
	failed := false
	for _, arch := range archs {
		src := ptx
		if sm90(arch) {
			// What a compute capability 9.0+ GPU loads: the module's
			// sm_90 instructions turned on (internal/ptxpatch).
			if on, ok := ptxpatch.EnableSM90(string(ptx)); ok {
				src = []byte(on)
			}
		}
		rep, err := Assemble(src, arch, Path(path), FileName(checkFileName(name)))
		if err != nil {
			failed = true
			var pe *Error
			if errors.As(err, &pe) {
				t.Errorf("%s: %v\nptxas log:\n%s", name, err, pe.Log())
			} else {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		reports[arch] = rep
	}
	if failed {
		t.FailNow()
	}
	return reports
}

// sm90 reports whether arch is sm_90 or newer.
func sm90(arch string) bool { return ptxpatch.SM(arch) >= 90 }

// checkFileName turns a Check name into a PTX file name for ptxas.
func checkFileName(name string) string {
	safe := make([]byte, 0, len(name)+4)
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-' && i > 0:
			safe = append(safe, c)
		default:
			safe = append(safe, '_')
		}
	}
	s := string(safe)
	if s == "" {
		s = "kernel"
	}
	if len(s) < 4 || s[len(s)-4:] != ".ptx" {
		s += ".ptx"
	}
	return s
}

// CheckModule is the test every generated package runs on its module:
// Check for the default arches, then every entry must be in ptxas's report
// and none may spill. Each entry's registers and shared memory are logged
// (shown with -v, or beside a failure).
func CheckModule(t testing.TB, name, ptx string) {
	t.Helper()
	want := strings.Count(ptx, ".visible .entry ")
	for arch, rep := range Check(t, name, []byte(ptx)) {
		entries := rep.Entries()
		if len(entries) != want {
			t.Errorf("%s: ptxas reported %d entries, the module has %d", arch, len(entries), want)
		}
		for _, f := range entries {
			if f.Spills() {
				t.Errorf("%s: %s spills: %v", arch, f.Name, f)
			}
			t.Logf("%s: %v", arch, f)
		}
	}
}
