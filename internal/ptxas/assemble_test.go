package ptxas

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAssembleValid(t *testing.T) {
	reports := Check(t, "add", readTestdata(t, "add.ptx"))
	for _, arch := range DefaultArchs {
		r := reports[arch]
		if r == nil {
			t.Fatalf("no report for %s", arch)
		}
		if r.Arch != arch {
			t.Errorf("Arch = %q, want %q", r.Arch, arch)
		}
		if !bytes.HasPrefix(r.Cubin, []byte("\x7fELF")) {
			t.Errorf("%s: cubin is not an ELF file (%d bytes)", arch, len(r.Cubin))
		}
		f := r.Func("add")
		if f == nil || !f.Entry {
			t.Fatalf("%s: no entry add in report:\n%s", arch, r)
		}
		// add.ptx declares 1 KiB of shared memory and syncs once.
		if f.Registers <= 0 || f.SharedBytes != 1024 || f.Spills() || f.StackFrame != 0 {
			t.Errorf("%s: unexpected report: %s", arch, f)
		}
		if !strings.Contains(r.Log, "Function properties for add") {
			t.Errorf("%s: Log lacks ptxas -v output:\n%s", arch, r.Log)
		}
	}
}

func TestAssembleCallAndLocalArray(t *testing.T) {
	r := Check(t, "call.ptx", readTestdata(t, "call.ptx"), "sm_80")["sm_80"]
	big, helper := r.Func("big"), r.Func("helper")
	if big == nil || helper == nil || !big.Entry || helper.Entry {
		t.Fatalf("want entry big and func helper:\n%s", r)
	}
	// The 4 KiB local array lives in big's stack frame.
	if big.StackFrame < 4096 {
		t.Errorf("big: stack frame %d bytes, want >= 4096", big.StackFrame)
	}
}

func TestAssembleInvalid(t *testing.T) {
	path := Require(t)
	_, err := Assemble(readTestdata(t, "bad.ptx"), "sm_80", Path(path), FileName("bad.ptx"))
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("Assemble(bad.ptx) err = %v, want *Error", err)
	}
	var line33 *Message
	for i, m := range pe.Messages {
		if m.Line == 33 && m.Severity == "error" {
			line33 = &pe.Messages[i]
			break
		}
	}
	if line33 == nil || line33.Source != "foo.bar %f1;" {
		t.Fatalf("no error quoting line 33 in %+v", pe.Messages)
	}
	if msg := err.Error(); !strings.Contains(msg, "bad.ptx:33: error:") || !strings.Contains(msg, "33 | foo.bar %f1;") {
		t.Errorf("error text does not point at the bad line:\n%s", msg)
	}
}

// pressurePTX is a kernel that keeps n floats live at once: with
// -maxrregcount=32 and n well above 32, ptxas must spill.
func pressurePTX(n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, ".version 8.0\n.target sm_80\n.address_size 64\n\n")
	fmt.Fprintf(&b, ".visible .entry pressure(.param .u64 p)\n{\n")
	fmt.Fprintf(&b, "\t.reg .f32 %%f<%d>;\n\t.reg .b64 %%rd<3>;\n", n+1)
	fmt.Fprintf(&b, "\tld.param.u64 %%rd1, [p];\n\tcvta.to.global.u64 %%rd2, %%rd1;\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\tld.volatile.global.f32 %%f%d, [%%rd2+%d];\n", i, 4*i)
	}
	fmt.Fprintf(&b, "\tmov.f32 %%f%d, 0f00000000;\n", n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\tfma.rn.f32 %%f%d, %%f%d, %%f%d, %%f%d;\n", n, i, n-1-i, n)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\tst.volatile.global.f32 [%%rd2+%d], %%f%d;\n", 4*i, i)
	}
	fmt.Fprintf(&b, "\tst.global.f32 [%%rd2], %%f%d;\n\tret;\n}\n", n)
	return []byte(b.String())
}

func TestAssembleSpills(t *testing.T) {
	path := Require(t)
	ptx := pressurePTX(96)

	// Without a register cap it fits: no spills, and it assembles.
	r, err := Assemble(ptx, "sm_80", Path(path))
	if err != nil {
		t.Fatalf("uncapped: %v", err)
	}
	if f := r.Func("pressure"); f == nil || f.Spills() || f.Registers <= 32 {
		t.Fatalf("uncapped: want > 32 registers and no spills:\n%s", r)
	}

	// Capped at 32 registers it spills, which --warn-on-spills and
	// -Werror turn into an error that still carries the spill counts.
	_, err = Assemble(ptx, "sm_80", Path(path), MaxRegCount(32))
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("capped: err = %v, want *Error for spills", err)
	}
	if f := pe.Report.Func("pressure"); f == nil || !f.Spills() {
		t.Errorf("capped: error report shows no spills:\n%s", pe.Report)
	}
	if !strings.Contains(err.Error(), "spilled") {
		t.Errorf("capped: error does not mention spilling:\n%v", err)
	}

	// AllowSpills assembles it and reports the spills.
	r, err = Assemble(ptx, "sm_80", Path(path), MaxRegCount(32), AllowSpills())
	if err != nil {
		t.Fatalf("AllowSpills: %v", err)
	}
	f := r.Func("pressure")
	if f == nil || f.Registers > 32 || f.SpillStores == 0 || f.SpillLoads == 0 || f.StackFrame == 0 {
		t.Errorf("AllowSpills: want <= 32 registers and spill stores, loads and stack:\n%s", r)
	}
}

func TestAssembleArgs(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake ptxas is a shell script")
	}
	// A fake ptxas that prints its arguments, one per line, and writes
	// the -o file, so the command line is checked without NVIDIA's binary.
	fake := filepath.Join(t.TempDir(), "ptxas")
	writeExe(t, fake, `out=""; prev=""
for a in "$@"; do echo "arg $a" >&2; [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
printf '\177ELF' > "$out"`)
	r, err := Assemble([]byte("// ptx"), "sm_90a", Path(fake))
	if err != nil {
		t.Fatal(err)
	}
	got := r.Log
	for _, want := range []string{"arg -arch=sm_90a\n", "arg -v\n", "arg -Werror\n", "arg -O3\n", "arg --warn-on-spills\n", "arg kernel.ptx\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("ptxas was not passed %q; log:\n%s", strings.TrimSpace(want), got)
		}
	}
	if strings.Contains(got, "maxrregcount") {
		t.Errorf("-maxrregcount passed without MaxRegCount:\n%s", got)
	}

	r, err = Assemble([]byte("// ptx"), "sm_80", Path(fake), OptLevel(1), MaxRegCount(64), AllowSpills(),
		FileName("mine.ptx"), Args("--extra"))
	if err != nil {
		t.Fatal(err)
	}
	got = r.Log
	for _, want := range []string{"arg -O1\n", "arg -maxrregcount=64\n", "arg --extra\n", "arg mine.ptx\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("ptxas was not passed %q; log:\n%s", strings.TrimSpace(want), got)
		}
	}
	if strings.Contains(got, "--warn-on-spills") || strings.Contains(got, "-O3") {
		t.Errorf("AllowSpills/OptLevel ignored:\n%s", got)
	}
}

func TestAssembleBadInput(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "ptxas") // never run: inputs are rejected first
	for _, arch := range []string{"", "80", "sm80", "-o/etc/passwd", "sm_80 -v"} {
		if _, err := Assemble(nil, arch, Path(fake)); err == nil || !strings.Contains(err.Error(), "arch") {
			t.Errorf("Assemble(arch %q) err = %v, want an arch error", arch, err)
		}
	}
	for _, name := range []string{"", "a/b.ptx", "-v"} {
		if _, err := Assemble(nil, "sm_80", Path(fake), FileName(name)); err == nil || !strings.Contains(err.Error(), "file name") {
			t.Errorf("Assemble(FileName %q) err = %v, want a file name error", name, err)
		}
	}
	if _, err := Assemble(nil, "sm_80", Path(fake)); err == nil || !strings.Contains(err.Error(), "running") {
		t.Errorf("Assemble with a missing binary: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Assemble(nil, "sm_80", Path(fake), Context(ctx)); err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Assemble with a cancelled context: err = %v, want context.Canceled", err)
	}
}
