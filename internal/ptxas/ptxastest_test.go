package ptxas

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a helper ended the test
// instead of ending it, so Require's and Check's decisions can be tested.
type recorder struct {
	testing.TB
	skipped, fatal, errors []string
	failNow                bool
}

func newRecorder(t *testing.T) *recorder { return &recorder{TB: t} }

func (r *recorder) Helper()                   {}
func (r *recorder) Skipf(f string, a ...any)  { r.skipped = append(r.skipped, fmt.Sprintf(f, a...)) }
func (r *recorder) Fatalf(f string, a ...any) { r.fatal = append(r.fatal, fmt.Sprintf(f, a...)) }
func (r *recorder) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }
func (r *recorder) FailNow()                  { r.failNow = true }

// endedWith reports whether the helper skipped (skip) and failed (fail).
func (r *recorder) endedWith(skip, fail bool) bool {
	return (len(r.skipped) > 0) == skip && (len(r.fatal) > 0 || r.failNow) == fail
}

// contains reports whether any recorded message contains s.
func (r *recorder) contains(s string) bool { return strings.Contains(r.String(), s) }

func (r *recorder) String() string {
	return strings.Join(append(append(append([]string{}, r.skipped...), r.fatal...), r.errors...), "\n")
}

func TestRequireWithoutPtxas(t *testing.T) {
	isolate(t)

	t.Setenv("CI", "")
	r := newRecorder(t)
	if got := Require(r); got != "" || !r.endedWith(true, false) || !r.contains("scripts/fetch-ptxas.sh") {
		t.Errorf("local run without ptxas: got %q, %v; want a skip naming the fetch script", got, r)
	}

	t.Setenv("CI", "true")
	r = newRecorder(t)
	if Require(r); !r.endedWith(false, true) || !r.contains("scripts/fetch-ptxas.sh") || !r.contains("CI=true") {
		t.Errorf("CI run without ptxas: %v; want a failure naming the fetch script", r)
	}

	// Check goes through Require: it must not assemble or return reports.
	r = newRecorder(t)
	if reps := Check(r, "x", nil); len(reps) != 0 || !r.endedWith(false, true) {
		t.Errorf("Check in CI without ptxas: %v, %v", reps, r)
	}

	// A broken $KERN_PTXAS fails even outside CI.
	t.Setenv("CI", "")
	t.Setenv("KERN_PTXAS", filepath.Join(t.TempDir(), "missing"))
	r = newRecorder(t)
	if Require(r); !r.endedWith(false, true) {
		t.Errorf("bad $KERN_PTXAS: %v; want a failure", r)
	}
}

func TestCheckReportsEveryArch(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake ptxas is a shell script")
	}
	isolate(t)
	// A fake ptxas that accepts sm_80 and rejects everything else the way
	// ptxas does, naming line 2 of the file.
	fake := filepath.Join(t.TempDir(), "ptxas")
	writeExe(t, fake, `out=""; prev=""; arch=""; file=""
for a in "$@"; do case "$a" in -arch=*) arch="${a#-arch=}";; esac; [ "$prev" = "-o" ] && out="$a"; prev="$a"; file="$a"; done
if [ "$arch" = sm_80 ]; then printf '\177ELF' > "$out"; exit 0; fi
echo "ptxas $file, line 2; error   : Feature not supported on $arch" >&2; exit 255`)
	t.Setenv("KERN_PTXAS", fake)

	r := newRecorder(t)
	reps := Check(r, "pkg/kern", []byte("line one\nline two\n"), "sm_80", "sm_90", "sm_100")
	if !r.failNow {
		t.Fatalf("Check did not fail the test: %v", r)
	}
	if len(r.errors) != 2 {
		t.Fatalf("want one error per failing arch, got %d: %v", len(r.errors), r.errors)
	}
	for _, want := range []string{"pkg_kern.ptx:2: error: Feature not supported on sm_90", "2 | line two", "sm_100"} {
		if !r.contains(want) {
			t.Errorf("Check's errors lack %q:\n%s", want, r)
		}
	}
	if len(reps) != 1 || reps["sm_80"] == nil {
		t.Errorf("Check returned %v, want the sm_80 report only", reps)
	}

	r = newRecorder(t)
	reps = Check(r, "ok", []byte("x"), "sm_80")
	if !r.endedWith(false, false) || reps["sm_80"] == nil {
		t.Errorf("Check on an accepted arch: %v, %v", reps, r)
	}
}

func TestCheckFileName(t *testing.T) {
	for name, want := range map[string]string{
		"add":                      "add.ptx",
		"add.ptx":                  "add.ptx",
		"compiler/testdata/x.ptx":  "compiler_testdata_x.ptx",
		"-v":                       "_v.ptx",
		"":                         "kernel.ptx",
		"TestFoo/sub test (sm_80)": "TestFoo_sub_test__sm_80_.ptx",
	} {
		if got := checkFileName(name); got != want {
			t.Errorf("checkFileName(%q) = %q, want %q", name, got, want)
		}
	}
}
