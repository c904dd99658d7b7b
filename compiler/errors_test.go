package compiler

// Rejected kernels: each testdata/errors/*.go file carries annotations
//
//	// ERROR [Code] "regexp"        an error on this line (the regexp is a
//	                                 Go string literal, "..." or `...`)
//	// ERROR@-1 [Code] "regexp"     an error on the line above (or @+N
//	                                 below) for lines that cannot hold a
//	                                 comment, such as //kern:kernel)
//
// (several may share a line), and an optional `// ARCH sm_NN` line picks
// the target. The test compiles the file and matches the diagnostics with
// the annotations in both directions: every annotation must be matched by
// an error on its line, and every error must be annotated. Every
// diagnostic must have a file:line:col position and a code.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// annotation is one expected error.
type annotation struct {
	line    int
	code    Code
	re      *regexp.Regexp
	matched bool
}

var (
	annotRE = regexp.MustCompile(`ERROR(@[+-]\d+)?\s+(?:([A-Z][A-Za-z]+)\s+)?("(?:[^"\\]|\\.)*"|` + "`[^`]*`)")
	archRE  = regexp.MustCompile(`(?m)^// ARCH (sm_\w+)$`)
)

// parseAnnotations reads the ERROR comments of a source file.
func parseAnnotations(t *testing.T, path string, src []byte) []*annotation {
	t.Helper()
	var out []*annotation
	for i, line := range strings.Split(string(src), "\n") {
		c := strings.Index(line, "// ERROR")
		if c < 0 {
			continue
		}
		for _, m := range annotRE.FindAllStringSubmatch(line[c:], -1) {
			pat, err := strconv.Unquote(m[3])
			if err != nil {
				t.Fatalf("%s:%d: bad ERROR pattern %s: %v", path, i+1, m[3], err)
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				t.Fatalf("%s:%d: bad ERROR regexp %q: %v", path, i+1, pat, err)
			}
			a := &annotation{line: i + 1, code: Code(m[2]), re: re}
			if m[1] != "" {
				off, _ := strconv.Atoi(m[1][1:])
				a.line += off
			}
			out = append(out, a)
		}
	}
	return out
}

// diagnosticsOf returns err's diagnostics, failing the test if err is
// not an ErrorList.
func diagnosticsOf(t *testing.T, err error) ErrorList {
	t.Helper()
	var el ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("error is %T, not an ErrorList: %v", err, err)
	}
	return el
}

// matchDiagnostics matches diagnostics with annotations in both
// directions and checks each diagnostic's position and code.
func matchDiagnostics(t *testing.T, path string, diags ErrorList, annots []*annotation) {
	t.Helper()
	base := filepath.Base(path)
	for _, d := range diags {
		if d.Pos.Line <= 0 || d.Pos.Column <= 0 || filepath.Base(d.Pos.Filename) != base {
			t.Errorf("diagnostic without a file:line:col position in %s: %v", base, d)
		}
		if d.Code == "" {
			t.Errorf("diagnostic without a code: %v", d)
		}
		if want := fmt.Sprintf("%s: %s [%s]", d.Pos, d.Msg, d.Code); d.Error() != want {
			t.Errorf("Diagnostic.Error() = %q, want %q", d.Error(), want)
		}
		found := false
		for _, a := range annots {
			if a.line == d.Pos.Line && (a.code == "" || a.code == d.Code) && a.re.MatchString(d.Msg) {
				a.matched, found = true, true
			}
		}
		if !found {
			t.Errorf("unexpected error %s:%d:%d: %s [%s]", base, d.Pos.Line, d.Pos.Column, d.Msg, d.Code)
		}
	}
	for _, a := range annots {
		if !a.matched {
			t.Errorf("%s:%d: no error matching %s %q", base, a.line, a.code, a.re)
		}
	}
}

func TestErrors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "errors", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/errors files: %v", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".go"), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			annots := parseAnnotations(t, path, src)
			if len(annots) == 0 {
				t.Fatalf("%s has no ERROR annotations", path)
			}
			var cfg Config
			if m := archRE.FindSubmatch(src); m != nil {
				cfg.Arch = string(m[1])
			}
			p, err := CompileSource(cfg, path, src)
			if err == nil {
				t.Fatalf("%s compiled (%d kernels); want errors", path, len(p.Kernels))
			}
			matchDiagnostics(t, path, diagnosticsOf(t, err), annots)
		})
	}
}

// TestErrorsPackage compiles a package through go/packages (Compile), so
// that it may import what CompileSource refuses: fmt.
func TestErrorsPackage(t *testing.T) {
	t.Parallel() // go/packages runs go list: overlap it with ptxas
	dir := filepath.Join("testdata", "errpkg")
	_, err := Compile(Config{Dir: dir}, ".")
	if err == nil {
		t.Fatal("Compile succeeded; want errors")
	}
	diags := diagnosticsOf(t, err)
	var all []*annotation
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	sort.Strings(files)
	if len(files) != 1 {
		t.Fatalf("want one file in %s, have %v", dir, files)
	}
	src, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, parseAnnotations(t, files[0], src)...)
	matchDiagnostics(t, files[0], diags, all)
}

// TestErrorsInKernelLibrary compiles package use, whose kernels call a
// kernel library (//kern:library) that breaks the language's rules: each
// error is reported at the library's line, a barrier's with the kernel's
// call site.
func TestErrorsInKernelLibrary(t *testing.T) {
	t.Parallel()
	_, err := Compile(Config{Dir: filepath.Join("testdata", "errlib", "use")}, ".")
	if err == nil {
		t.Fatal("Compile succeeded; want errors")
	}
	diags := diagnosticsOf(t, err)
	path := filepath.Join("testdata", "errlib", "lib", "lib.go")
	src, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	matchDiagnostics(t, path, diags, parseAnnotations(t, path, src))
}

// TestErrorListSorted checks that an ErrorList is in source order and
// prints one diagnostic per line.
func TestErrorListSorted(t *testing.T) {
	path := filepath.Join("testdata", "errors", "divergent.go")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = CompileSource(Config{}, path, src)
	diags := diagnosticsOf(t, err)
	if len(diags) < 5 {
		t.Fatalf("want every error of the file in one run, got %d", len(diags))
	}
	for i := 1; i < len(diags); i++ {
		a, b := diags[i-1].Pos, diags[i].Pos
		if a.Line > b.Line || a.Line == b.Line && a.Column > b.Column {
			t.Errorf("diagnostics out of order: %v before %v", a, b)
		}
	}
	// One line per diagnostic, the first 20 of them, then a count.
	lines := strings.Split(err.Error(), "\n")
	want := len(diags)
	if want > 20 {
		want = 21
		if last := lines[len(lines)-1]; last != fmt.Sprintf("(and %d more errors)", len(diags)-20) {
			t.Errorf("ErrorList.Error() ends with %q", last)
		}
	}
	if len(lines) != want {
		t.Errorf("ErrorList.Error() has %d lines for %d diagnostics", len(lines), len(diags))
	}
	if lines[0] != diags[0].Error() {
		t.Errorf("ErrorList.Error() starts with %q, want %q", lines[0], diags[0].Error())
	}
}
