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
func checkRegBudget(t *testing.T, ptxasPath string, got map[regKey]int) {
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
		case l.max > 0 && n < l.max:
			t.Logf("%v: %d registers, down from the tolerated %d (baseline %d): lower max= in %s", k, n, l.max, l.base, regBaselineFile)
		case l.max == 0 && n > l.base+regSlack:
			t.Errorf("%v: %d registers, baseline %d: more than +%d (issue 8)", k, n, l.base, regSlack)
		case n != l.base:
			t.Logf("%v: %d registers (baseline %d)", k, n, l.base)
		}
	}
}
