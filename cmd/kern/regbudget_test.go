package main

// The register budget of issue 8: compiler changes may not make any
// kernel in the repository spill, nor grow its register count by more
// than regSlack over the count recorded in testdata/registers.txt.

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gokern/kern/compiler"
	"github.com/gokern/kern/internal/ptxas"
	"github.com/gokern/kern/internal/ptxpatch"
)

// regPtxasVersion is the ptxas release the baseline was counted with, as
// `ptxas --version` prints it.
const regPtxasVersion = "V13.5.37"

// regSlack is how many registers a kernel may gain over its baseline.
const regSlack = 4

// regBaselineFile holds one line per kernel and arch: "package kernel arch
// registers", optionally followed by "max=N" and a # comment. The counts
// are those of ptxas 13.5 -O3 on the PTX of main before the hot-loop work
// of issue 8 (commit d8952ae); kernels written since were added at their
// first count, and a kernel whose source changed its register needs (a
// directive, a tile size) was counted again, saying so in its comment.
// max=N is a known violation of the rule, tolerated up to N registers
// until the compiler is fixed: it may only go down.
const regBaselineFile = "testdata/registers.txt"

// regWrite, given a path, writes the counts measured by
// TestEveryKernelInTheRepoAssembles there in regBaselineFile's format (to
// record a baseline, or to add a new kernel's line by hand).
var regWrite = flag.String("regs.write", "", "write the measured register counts to this file")

// regKey names one kernel at one architecture.
type regKey struct{ pkg, kernel, arch string }

// regLine is one line of regBaselineFile: the baseline count and the
// tolerated maximum of a known violation (0 if none).
type regLine struct{ base, max int }

func (k regKey) String() string { return k.pkg + " " + k.kernel + " " + k.arch }

// checkNotPressure is what a known violation (max=) must show to be
// tolerated: that its count is ptxas's choice, not what the code needs.
// The kernel's entry, given .maxnreg base+regSlack, must assemble without
// a spill: ptxas fills registers up to what still gives the occupancy it
// aims at (MatMul16 on sm_80: 32 at 256 threads, full occupancy; 30 and
// no spill under .maxnreg 31), so a count above the budget can be slack
// as well as pressure, and only pressure is a regression of the code.
func checkNotPressure(t *testing.T, k regKey, module string, n, limit int) {
	t.Helper()
	regs, err := registersUnder(t, k, module, limit)
	if err != nil {
		t.Errorf("%v: a known violation, but %v", k, err)
		return
	}
	t.Logf("%v: %d registers by ptxas's choice; %d without a spill under .maxnreg %d", k, n, regs, limit)
}

// registersUnder assembles k's entry of module capped at .maxnreg limit
// and returns its count, or an error if it spills or is not found.
func registersUnder(t testing.TB, k regKey, module string, limit int) (int, error) {
	head := ".visible .entry " + k.kernel + "("
	i := strings.Index(module, head)
	if i < 0 {
		return 0, fmt.Errorf("its entry is not in the module")
	}
	j := strings.Index(module[i:], "\n)\n")
	if j < 0 || strings.Contains(module[i:i+j], ".maxnreg") {
		return 0, fmt.Errorf("its entry cannot take a .maxnreg")
	}
	at := i + j + len("\n)\n")
	capped := module[:at] + fmt.Sprintf(".maxnreg %d\n", limit) + module[at:]
	if ptxpatch.SM(k.arch) >= 90 { // as ptxas.Check: what an sm_90 GPU loads
		if on, ok := ptxpatch.EnableSM90(capped); ok {
			capped = on
		}
	}
	rep, err := ptxas.Assemble([]byte(capped), k.arch, ptxas.Path(ptxas.Require(t)), ptxas.AllowSpills(), ptxas.FileName(k.kernel+"_maxnreg.ptx"))
	if err != nil {
		return 0, err
	}
	for _, f := range rep.Entries() {
		if f.Name != k.kernel {
			continue
		}
		if f.Spills() || f.Registers > limit {
			return 0, fmt.Errorf("under .maxnreg %d it uses %d registers and spills %d bytes: the code needs the registers", limit, f.Registers, f.SpillStores)
		}
		return f.Registers, nil
	}
	return 0, fmt.Errorf("it is not in ptxas's report of the capped module")
}

// TestRegistersUnderCatchesPressure: the check behind a known violation
// fails where registers are really needed (MatMul32 holds 4 accumulators
// and its tiles' values: not in 24, ptxas's lowest cap) and passes where they are slack.
func TestRegistersUnderCatchesPressure(t *testing.T) {
	if ptxas.Require(t) == "" {
		return
	}
	pkgs, err := compiler.Compile(compiler.Config{Dir: "../.."}, "./examples/tiled_matmul_f32")
	if err != nil || len(pkgs) != 1 {
		t.Fatalf("compile: %v (%d packages)", err, len(pkgs))
	}
	module := pkgs[0].PTX
	if _, err := registersUnder(t, regKey{"examples/tiled_matmul_f32", "MatMul32", "sm_80"}, module, 24); err == nil {
		t.Error("MatMul32 under .maxnreg 24: no spill reported")
	}
	if n, err := registersUnder(t, regKey{"examples/tiled_matmul_f32", "MatMul16", "sm_80"}, module, 31); err != nil || n > 31 {
		t.Errorf("MatMul16 under .maxnreg 31: %d registers, %v", n, err)
	}
}

// readRegBaseline parses regBaselineFile; blank lines and # comments are
// skipped.
func readRegBaseline(path string) (map[regKey]regLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	base := map[regKey]regLine{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s, _, _ := strings.Cut(sc.Text(), "#")
		fs := strings.Fields(s)
		if len(fs) == 0 {
			continue
		}
		if len(fs) != 4 && len(fs) != 5 {
			return nil, fmt.Errorf("%s:%d: want \"package kernel arch registers [max=N]\", got %q", path, line, s)
		}
		var l regLine
		var err error
		if l.base, err = strconv.Atoi(fs[3]); err != nil {
			return nil, fmt.Errorf("%s:%d: registers: %w", path, line, err)
		}
		if len(fs) == 5 {
			m, ok := strings.CutPrefix(fs[4], "max=")
			if l.max, err = strconv.Atoi(m); !ok || err != nil || l.max <= l.base+regSlack {
				return nil, fmt.Errorf("%s:%d: want max=N with N > registers+%d, got %q", path, line, regSlack, fs[4])
			}
		}
		k := regKey{fs[0], fs[1], fs[2]}
		if _, dup := base[k]; dup {
			return nil, fmt.Errorf("%s:%d: %v listed twice", path, line, k)
		}
		base[k] = l
	}
	return base, sc.Err()
}

// writeRegs writes measured counts, sorted, in regBaselineFile's format.
func writeRegs(path string, got map[regKey]int) error {
	keys := make([]regKey, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	var b strings.Builder
	b.WriteString("# package kernel arch registers (ptxas -O3); see regbudget_test.go\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%v %d\n", k, got[k])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// checkRegBudget compares measured counts with the baseline: a kernel
// more than regSlack over its line (or over its max=, for a known
// violation) fails, and so does a kernel without a line (a new kernel
// records its first count, so later growth is seen). A known violation
// that has come down is reported, so its max= can be lowered.
func checkRegBudget(t *testing.T, ptxasPath string, got map[regKey]int, modules map[regKey]string) {
	t.Helper()
	// Register counts are only comparable from the ptxas that made the
	// baseline (scripts/fetch-ptxas.sh pins it).
	if v, err := exec.Command(ptxasPath, "--version").Output(); err != nil || !strings.Contains(string(v), regPtxasVersion) {
		t.Logf("register budget not checked: %s is not ptxas %s (%v)", ptxasPath, regPtxasVersion, err)
		return
	}
	if *regWrite != "" {
		if err := writeRegs(*regWrite, got); err != nil {
			t.Fatal(err)
		}
	}
	base, err := readRegBaseline(regBaselineFile)
	if err != nil {
		t.Fatalf("register baseline: %v", err)
	}
	keys := make([]regKey, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		n := got[k]
		l, ok := base[k]
		switch {
		case !ok:
			t.Errorf("%v: %d registers, and no line in %s: add \"%v %d\"", k, n, regBaselineFile, k, n)
		case l.max > 0 && n > l.max:
			t.Errorf("%v: %d registers, baseline %d, known violation tolerated up to %d: grew further", k, n, l.base, l.max)
		case l.max > 0 && n > l.base+regSlack:
			checkNotPressure(t, k, modules[regKey{k.pkg, "", k.arch}], n, l.base+regSlack)
		case l.max > 0 && n < l.max:
			t.Logf("%v: %d registers, down from the tolerated %d (baseline %d): lower max= in %s", k, n, l.max, l.base, regBaselineFile)
		case l.max == 0 && n > l.base+regSlack:
			t.Errorf("%v: %d registers, baseline %d: more than +%d (issue 8)", k, n, l.base, regSlack)
		case n != l.base:
			t.Logf("%v: %d registers (baseline %d)", k, n, l.base)
		}
	}
}
