package compiler

// Golden PTX tests: each testdata/NAME.go is a small package of kernels
// exercising one construct. It is compiled for sm_80 and compared with
// testdata/NAME.ptx (comment and blank lines ignored; `go test ./compiler
// -update` rewrites the golden files), compiled again for sm_90, and both
// modules are assembled by ptxas. Facts the compiler claims (read-only
// loads, bounds-check elimination, register-resident arrays, shared memory
// sizes, ...) are asserted per file in goldenChecks.

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

var update = flag.Bool("update", false, "rewrite the golden .ptx files in testdata")

// noGolden marks a testdata file whose PTX depends on code outside the
// compiler (package devmath): compiled, assembled and checked, but not
// compared with a golden file.
var noGolden = regexp.MustCompile(`(?m)^// golden: none`)

// archLine marks a testdata file whose kernels need a newer target than
// sm_80 (Hopper's mbarriers, wgmma, TMA): "// arch: sm_90a" compiles,
// compares and assembles it for that target only.
var archLine = regexp.MustCompile(`(?m)^// arch: (sm_\w+)$`)

// fileArch returns the target a testdata file asks for, "" for the default.
func fileArch(t *testing.T, path string) string {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := archLine.FindSubmatch(src); m != nil {
		return string(m[1])
	}
	return ""
}

// golden is one compiled testdata file.
type golden struct {
	name       string // file name without .go
	sm80, sm90 *Package
	// arch is the file's own target ("// arch:"), "" for sm_80 and sm_90;
	// then sm80 and sm90 both hold the module compiled for arch.
	arch string
}

// compileFile compiles a testdata file with CompileSource.
func compileFile(t *testing.T, path string, cfg Config) *Package {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := CompileSource(cfg, path, src)
	if err != nil {
		t.Fatalf("%s (%s): %v", path, cfg.arch(), err)
	}
	if p == nil || len(p.Kernels) == 0 {
		t.Fatalf("%s (%s): no kernels compiled", path, cfg.arch())
	}
	return p
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	var all []*golden
	for _, path := range files {
		g := &golden{name: strings.TrimSuffix(filepath.Base(path), ".go")}
		t.Run(g.name, func(t *testing.T) {
			g.arch = fileArch(t, path)
			g.sm80 = compileFile(t, path, Config{Arch: g.arch})
			if g.arch != "" {
				g.sm90 = g.sm80
				if !strings.Contains(g.sm80.PTX, "\n.target "+g.arch+"\n") {
					t.Errorf("module does not target %s", g.arch)
				}
			} else {
				g.sm90 = compileFile(t, path, Config{Arch: "sm_90"})
				if g.sm80.Arch != "sm_80" || !strings.Contains(g.sm80.PTX, "\n.target sm_80\n") {
					t.Errorf("default Config does not target sm_80: Arch %q", g.sm80.Arch)
				}
				if !strings.Contains(g.sm90.PTX, "\n.target sm_90\n") {
					t.Errorf("sm_90 module does not target sm_90")
				}
			}
			if again := compileFile(t, path, Config{Arch: g.arch}); again.PTX != g.sm80.PTX {
				t.Errorf("two compilations of %s differ: the output is not deterministic", path)
			}
			if src, err := os.ReadFile(path); err == nil && noGolden.Match(src) {
				t.Logf("%s: golden comparison off (// golden: none)", path)
			} else {
				compareGolden(t, strings.TrimSuffix(path, ".go")+".ptx", g.sm80.PTX)
			}
			checkCommon(t, g.sm80)
			if check := goldenChecks[g.name]; check != nil {
				check(t, g.sm80)
			}
			all = append(all, g)
		})
	}
	goldens, _ := filepath.Glob(filepath.Join("testdata", "*.ptx"))
	for _, ptx := range goldens {
		if _, err := os.Stat(strings.TrimSuffix(ptx, ".ptx") + ".go"); err != nil {
			t.Errorf("golden file %s has no kernel source beside it", ptx)
		}
	}
	for name := range goldenChecks {
		if _, err := os.Stat(filepath.Join("testdata", name+".go")); err != nil {
			t.Errorf("goldenChecks has an entry for %s, which has no testdata file", name)
		}
	}
	// Assembling dominates the run time: do it in parallel.
	t.Run("ptxas", func(t *testing.T) {
		for _, g := range all {
			t.Run(g.name, func(t *testing.T) {
				t.Parallel()
				if g.arch != "" {
					rep := ptxas.Check(t, g.name, []byte(g.sm80.PTX), g.arch)[g.arch]
					checkReport(t, g.sm80, rep)
					if check := reportChecks[g.name]; check != nil {
						check(t, g.sm80, rep)
					}
					return
				}
				reps := ptxas.Check(t, g.name, []byte(g.sm80.PTX), "sm_80", "sm_90")
				reps90 := ptxas.Check(t, g.name+"_sm90", []byte(g.sm90.PTX), "sm_90")
				for _, rep := range []*ptxas.Report{reps["sm_80"], reps["sm_90"], reps90["sm_90"]} {
					checkReport(t, g.sm80, rep)
					if check := reportChecks[g.name]; check != nil {
						check(t, g.sm80, rep)
					}
				}
			})
		}
	})
}

// compareGolden compares got with the golden file, ignoring comment and
// blank lines, or rewrites the golden file under -update.
func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./compiler -update to create it)", err)
	}
	g, w := significantLines(got), significantLines(string(want))
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Fatalf("PTX differs from %s at significant line %d:\n got: %q\nwant: %q\n(run go test ./compiler -update to accept the new output)", path, i+1, gl, wl)
		}
	}
}

// significantLines is the PTX without comment and blank lines, each line
// trimmed.
func significantLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		out = append(out, l)
	}
	return out
}

var (
	barRed0   = regexp.MustCompile(`^bar\.red\.or\.pred %p\d+, 0, %p\d+;$`)
	slotWrite = regexp.MustCompile(`(?m)^\s*(?:@!?%p\d+ )?(?:atom|st)\.[a-z0-9.]* \[` + ErrorSlot)
)

var paramRegs = regexp.MustCompile(`(?m)^\s*ld\.param\.\w+ (%\w+), `)

// checkCommon asserts what holds for every compiled module.
func checkCommon(t *testing.T, p *Package) {
	t.Helper()
	for _, k := range p.Kernels {
		body := entryBody(t, p, k.Entry)
		// Every barrier is the block-wide barrier 0 (bar.red is GridSync's).
		for _, l := range strings.Split(body, "\n") {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "bar.") && !strings.HasPrefix(l, "bar.warp.sync") && l != "bar.sync 0;" && !barRed0.MatchString(l) {
				t.Errorf("%s: barrier %q is not bar.sync 0", k.Name, l)
			}
		}
		// A register loaded from a .param is never assigned again (a
		// stray write there once came from a phi move with no register).
		for _, r := range paramRegs.FindAllStringSubmatch(body, -1) {
			dst := regexp.MustCompile(`(?m)^\s*(?:@!?%p\d+ )?[a-z][a-z0-9.]* ` + regexp.QuoteMeta(r[1]) + `(,|;)`)
			if n := len(dst.FindAllString(body, -1)); n != 1 {
				t.Errorf("%s: parameter register %s is assigned %d times", k.Name, r[1], n)
			}
		}
		// Bounds-check sites and the error slot's writes go together
		// (GridSync only reads it).
		writesSlot := slotWrite.MatchString(body)
		if !k.Bounds && writesSlot && !hasPanicSite(k) {
			t.Errorf("%s: nobounds kernel writes %s", k.Name, ErrorSlot)
		}
		if writesSlot != (len(k.Sites) > 0) {
			t.Errorf("%s: %d check sites but error slot written: %v", k.Name, len(k.Sites), writesSlot)
		}
		// Loads from a parameter the kernel never writes use the
		// read-only path; loads from written ones must not.
		for _, prm := range k.Params {
			if prm.Kind != Slice {
				continue
			}
			for _, ld := range paramLoads(body, prm.Name) {
				nc := strings.HasPrefix(ld, "ld.global.nc")
				if prm.Writes && nc {
					t.Errorf("%s: %s is written but loaded with %q", k.Name, prm.Name, ld)
				}
				if !prm.Writes && !nc {
					t.Errorf("%s: %s is read-only but loaded with %q", k.Name, prm.Name, ld)
				}
			}
		}
	}
}

func hasPanicSite(k *Kernel) bool {
	for _, s := range k.Sites {
		if strings.HasPrefix(s, "panic at ") {
			return true
		}
	}
	return false
}

// checkReport asserts what holds for every kernel ptxas assembled.
func checkReport(t *testing.T, p *Package, rep *ptxas.Report) {
	t.Helper()
	if rep == nil {
		return
	}
	for _, k := range p.Kernels {
		f := rep.Func(k.Entry)
		if f == nil {
			t.Errorf("%s: ptxas did not report kernel %s:\n%s", rep.Arch, k.Entry, rep)
			continue
		}
		if f.Spills() {
			t.Errorf("%s: %s spills: %s", rep.Arch, k.Name, f)
		}
		if f.SharedBytes != k.SharedBytes {
			t.Errorf("%s: %s: ptxas reports %d bytes of shared memory, Kernel.SharedBytes says %d", rep.Arch, k.Name, f.SharedBytes, k.SharedBytes)
		}
	}
}

// entryBody returns the text of a kernel's .entry, from its name to its
// closing brace.
func entryBody(t *testing.T, p *Package, entry string) string {
	t.Helper()
	start := strings.Index(p.PTX, ".entry "+entry+"(")
	if start < 0 {
		t.Fatalf("no .entry %s in PTX", entry)
	}
	end := strings.Index(p.PTX[start:], "\n}\n")
	if end < 0 {
		t.Fatalf(".entry %s has no closing brace", entry)
	}
	return p.PTX[start : start+end+3]
}

// paramLoads returns the global loads in body whose address register was
// computed from parameter name's pointer. It follows the register data
// flow through mov, cvta and add, which is how every address is formed.
func paramLoads(body, name string) []string {
	derived := map[string]bool{}
	ptrLoad := regexp.MustCompile(`^ld\.param\.u64 (%rd\d+), \[` + regexp.QuoteMeta(ptxIdent(name)) + `_ptr\];$`)
	flow := regexp.MustCompile(`^(?:mov|cvta|cvta\.to\.global|add|mad)\.[a-z0-9.]*\s*(%rd\d+), (.*);$`)
	load := regexp.MustCompile(`^(ld\.global[a-z0-9.]*) [^,]*, \[(%rd\d+)(?:\+\d+)?\];$`)
	var out []string
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if m := ptrLoad.FindStringSubmatch(l); m != nil {
			derived[m[1]] = true
			continue
		}
		if m := flow.FindStringSubmatch(l); m != nil {
			for _, src := range strings.Split(m[2], ", ") {
				if derived[src] {
					derived[m[1]] = true
				}
			}
			continue
		}
		if m := load.FindStringSubmatch(l); m != nil && derived[m[2]] {
			out = append(out, m[1])
		}
	}
	return out
}

// kernelOf returns the kernel called name.
func kernelOf(t *testing.T, p *Package, name string) *Kernel {
	t.Helper()
	for _, k := range p.Kernels {
		if k.Name == name {
			return k
		}
	}
	t.Fatalf("no kernel %s in %s", name, p.Path)
	return nil
}

// countLines counts the instructions of body that match re.
func countLines(body, re string) int {
	rx := regexp.MustCompile(re)
	n := 0
	for _, l := range strings.Split(body, "\n") {
		if rx.MatchString(strings.TrimSpace(l)) {
			n++
		}
	}
	return n
}

// mustContain fails unless kernel k's PTX has a line matching re.
func mustContain(t *testing.T, p *Package, kernel, re string) {
	t.Helper()
	if countLines(entryBody(t, p, kernelOf(t, p, kernel).Entry), re) == 0 {
		t.Errorf("%s: no instruction matches %q", kernel, re)
	}
}

// mustNotContain fails if kernel k's PTX has a line matching re.
func mustNotContain(t *testing.T, p *Package, kernel, re string) {
	t.Helper()
	if n := countLines(entryBody(t, p, kernelOf(t, p, kernel).Entry), re); n > 0 {
		t.Errorf("%s: %d instructions match %q, want none", kernel, n, re)
	}
}

// writes returns the Writes flag of each slice parameter, as "name=bool".
func writes(k *Kernel) string {
	var parts []string
	for _, p := range k.Params {
		if p.Kind == Slice {
			parts = append(parts, fmt.Sprintf("%s=%v", p.Name, p.Writes))
		}
	}
	return strings.Join(parts, " ")
}

func wantWrites(t *testing.T, p *Package, kernel, want string) {
	t.Helper()
	if got := writes(kernelOf(t, p, kernel)); got != want {
		t.Errorf("%s: slice Writes flags %s, want %s", kernel, got, want)
	}
}

// goldenChecks are per-file assertions on the sm_80 module.
var goldenChecks = map[string]func(t *testing.T, p *Package){}

// reportChecks are per-file assertions on each ptxas report.
var reportChecks = map[string]func(t *testing.T, p *Package, rep *ptxas.Report){}
