package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const corpus = "../../emu/testdata/corpus/"

func writeF32(t *testing.T, path string, v []float32) {
	t.Helper()
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestEmuRunClangKernelAgainstExpected(t *testing.T) {
	dir := t.TempDir()
	want := make([]float32, 1000)
	for i := range want {
		want[i] = float32(i) + 0.5
	}
	writeF32(t, filepath.Join(dir, "want.bin"), want)
	out := filepath.Join(dir, "out.bin")
	code, stdout, stderr := runKern(t, "emu", "run", corpus+"clang_sm80_O2.ptx", "-kernel", "vec_add", "-grid", "4", "-block", "256",
		"-arg", "f32[1000]:zeros:out="+out+":expect="+filepath.Join(dir, "want.bin"),
		"-arg", "f32[1000]:iota", "-arg", "f32[1000]:fill=0.5", "-arg", "1000")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "vec_add_param_0: matches") || !strings.Contains(stdout, "warp-instructions") {
		t.Errorf("output:\n%s", stdout)
	}
	if b, err := os.ReadFile(out); err != nil || len(b) != 4000 || math.Float32frombits(binary.LittleEndian.Uint32(b[4*999:])) != 999.5 {
		t.Errorf("out.bin: %d bytes, %v", len(b), err)
	}

	// A wrong expectation fails the run and names the elements.
	want[7] = 1
	writeF32(t, filepath.Join(dir, "want.bin"), want)
	code, stdout, _ = runKern(t, "emu", "run", corpus+"clang_sm80_O2.ptx", "-kernel", "vec_add", "-grid", "4", "-block", "256",
		"-arg", "f32[1000]:zeros:expect="+filepath.Join(dir, "want.bin"),
		"-arg", "f32[1000]:iota", "-arg", "f32[1000]:fill=0.5", "-arg", "1000")
	if code != 1 || !strings.Contains(stdout, "vec_add_param_0[7] = 7.5, want 1") || !strings.Contains(stdout, "1 of 1000 elements differ") {
		t.Errorf("mismatch: exit %d\n%s", code, stdout)
	}
}

func TestEmuRunTritonKernel(t *testing.T) {
	// .reqntid 128 gives the block; Triton's two scratch pointers are 0.
	code, stdout, stderr := runKern(t, "emu", "run", corpus+"triton_add.ptx", "-grid", "2",
		"-arg", "f32[2000]:iota", "-arg", "f32[2000]:fill=1", "-arg", "f32[2000]:zeros:print", "-arg", "2000", "-arg", "0", "-arg", "0")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "add_kernel grid (2,1,1) block (128,1,1)") || !strings.Contains(stdout, "(f32[2000]): 1 2 3 4 5") {
		t.Errorf("output:\n%s", stdout)
	}
}

func TestEmuRunSanitizerNamesSourceLine(t *testing.T) {
	src, err := os.ReadFile(corpus + "kernels.cu")
	if err != nil {
		t.Fatal(err)
	}
	line := 1 + strings.Count(string(src[:strings.Index(string(src), "out[i] = a[i] + b[i];")]), "\n")
	// The third buffer is short: memcheck reports the loads past its end
	// with the .loc position of nvcc's -lineinfo and clang's
	// -gline-tables-only.
	for _, ptx := range []string{"nvcc_sm90.ptx", "clang_sm90_O3.ptx"} {
		code, stdout, _ := runKern(t, "emu", "run", corpus+ptx, "-kernel", "vec_add", "-grid", "4", "-block", "256", "-check", "memcheck",
			"-arg", "f32[1000]:zeros", "-arg", "f32[1000]:iota", "-arg", "f32[500]:fill=0.5", "-arg", "1000")
		if code != 1 || !strings.Contains(stdout, "memcheck: invalid global load") || !strings.Contains(stdout, fmt.Sprintf("kernels.cu:%d)", line)) {
			t.Errorf("%s: exit %d\n%s", ptx, code, stdout)
		}
	}
}

func TestEmuRunProfile(t *testing.T) {
	code, stdout, stderr := runKern(t, "emu", "run", corpus+"clang_sm80_O2.ptx", "-kernel", "transpose", "-grid", "2,2", "-block", "32,8", "-profile",
		"-arg", "f32[4096]:zeros", "-arg", "f32[4096]:rand", "-arg", "64", "-arg", "64")
	if code != 0 || !strings.Contains(stdout, "bank conflicts") || !strings.Contains(stdout, "st.shared.f32") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestEmuRunPrintf(t *testing.T) {
	code, stdout, stderr := runKern(t, "emu", "run", corpus+"nvcc_sm80.ptx", "-kernel", "hello", "-grid", "2", "-block", "32", "-arg", "3")
	if code != 0 || !strings.Contains(stdout, "block 1 thread 1: n=3 u=4000000000 x=0xff ll=-5000000000 f=1.500 c=B s=ok\n") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestEmuList(t *testing.T) {
	code, stdout, _ := runKern(t, "emu", "list", corpus+"triton_matmul.ptx")
	if code != 0 || !strings.Contains(stdout, "matmul_kernel(matmul_kernel_param_0 .u64") || !strings.Contains(stdout, ".reqntid 128,1,1") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
}

func TestEmuRunErrors(t *testing.T) {
	ptx := corpus + "clang_sm80_O2.ptx"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", ptx}, "choose one with -kernel"},
		{[]string{"run", ptx, "-kernel", "nope"}, `no entry "nope"`},
		{[]string{"run", ptx, "-kernel", "vec_add", "-block", "32", "-arg", "1"}, "takes 4 parameters"},
		{[]string{"run", ptx, "-kernel", "bitonic", "-block", "32", "-arg", "f99[4]:zeros"}, `unknown element type "f99"`},
		{[]string{"run", ptx, "-kernel", "bitonic", "-block", "32", "-arg", "u32[4]:sevens"}, `unknown initial value "sevens"`},
		{[]string{"run", ptx, "-kernel", "bitonic", "-block", "32", "-check", "leakcheck", "-arg", "u32[4]:zeros"}, `kern emu run: -check: unknown emulator check "leakcheck"`},
		{[]string{"run", ptx, "-kernel", "nbody", "-block", "32", "-arg", "0", "-arg", "0", "-arg", "1", "-arg", "x"}, "nbody_param_3 .f32"},
		{[]string{"run", ptx, "-kernel", "vec_add"}, "has no .reqntid: give -block"},
		{[]string{"frob"}, `unknown subcommand "frob"`},
	} {
		code, _, stderr := runKern(t, append([]string{"emu"}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("kern emu %v: exit %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
}

func TestHalfConversions(t *testing.T) {
	for _, c := range []struct {
		f float64
		h uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {0x1p-24, 0x0001},
		{0x1p-14, 0x0400}, {1 + 0x1p-11, 0x3c00}, {1 + 3*0x1p-11, 0x3c02}, {0.1, 0x2e66},
	} {
		if got := halfFromFloat(c.f); got != c.h {
			t.Errorf("halfFromFloat(%v) = %#04x, want %#04x", c.f, got, c.h)
		}
	}
	for h := 0; h < 0x7c00; h++ {
		if back := halfFromFloat(halfToFloat(uint16(h))); back != uint16(h) {
			t.Fatalf("half %#04x -> %v -> %#04x", h, halfToFloat(uint16(h)), back)
		}
	}
	if bf16FromFloat(1) != 0x3f80 || bf16FromFloat(1+0x1p-8) != 0x3f80 || bf16FromFloat(1+3*0x1p-8) != 0x3f82 {
		t.Error("bf16FromFloat rounding")
	}
}

// TestEmuDocumentedCommands runs the kern emu commands of README.md and
// docs/emulator.md as written (paths made relative to this package, out=
// files moved to a temporary directory).
func TestEmuDocumentedCommands(t *testing.T) {
	ran := 0
	for _, doc := range []string{"../../README.md", "../../docs/emulator.md"} {
		src, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(src), "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "go run ./cmd/kern emu ") {
				continue
			}
			args := shellWords(strings.TrimPrefix(line, "go run ./cmd/kern "))
			for i, a := range args {
				a = strings.ReplaceAll(a, "emu/testdata/", "../../emu/testdata/")
				args[i] = strings.ReplaceAll(a, "out=out.bin", "out="+filepath.Join(t.TempDir(), "out.bin"))
			}
			if code, stdout, stderr := runKern(t, args...); code != 0 {
				t.Errorf("%s: %s: exit %d\n%s%s", doc, line, code, stdout, stderr)
			}
			ran++
		}
	}
	if ran < 4 {
		t.Errorf("ran %d documented kern emu commands, want at least 4", ran)
	}
}

// shellWords splits a command line on spaces, keeping '...' together.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				out = append(out, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}
