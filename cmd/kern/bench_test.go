package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/cudastub"
)

var benchOpNames = []string{"RMSNorm", "AddRMSNorm", "Softmax", "SiLUMul", "GELU", "Add", "RoPE"}

func TestBenchOnTheEmulator(t *testing.T) {
	code, out, errs := runKern(t, "bench", "-device", "emu", "-n", "1024", "-cols", "128", "-runs", "2", "-warmup", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := []string{"kern bench on emu", "median time", "thread-instr/elem", "warp-instr/elem",
		"memcpy: does not apply on emu", "matmul: the square rows need a CUDA GPU"}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	for _, op := range benchOpNames {
		if !tableHasRow(out, "ops", op, "1Ki f32") {
			t.Errorf("no ops row for %s:\n%s", op, out)
		}
	}
	for _, c := range []string{"prefill f16", "prefill causal f16", "backward causal f16"} {
		if !tableHasRow(out, "attention", c, "1×128×2h×64") {
			t.Errorf("no attention row for %s:\n%s", c, out)
		}
	}
	if !tableHasRow(out, "attention", "prefill d256 causal f16", "1×128×2h×256") {
		t.Errorf("no attention row for prefill d256:\n%s", out)
	}
	for _, size := range []string{"2×256×4/2h", "1×512×4/2h"} {
		for _, c := range []string{"decode f16", "decode split-K f16", "decode v2 f16", "decode split-K v2 f16", "decode v1 f16", "decode split-K v1 f16", "decode split-K auto f16"} {
			if !tableHasRow(out, "attention", c, size) {
				t.Errorf("no attention row for %s %s:\n%s", c, size, out)
			}
		}
	}
	checkDecodeRows(t, out, tinyDecodeDim, []int{1, 16})
	for _, size := range []string{"2×256×4/2h", "1×512×4/2h"} {
		if r, _ := tableRow(out, "attention", "decode split-K f16", size); r.unit != "GB/s" || !(r.value > 0) {
			t.Errorf("attention decode split-K %s: %+v, want a GB/s figure", size, r)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 3 && (f[0] == "memcpy" || f[0] == "matmul" && !strings.HasPrefix(f[1], "decode")) {
			t.Errorf("a memcpy or square matmul row on the emulator: %q", line)
		}
	}
}

// tableHasRow reports whether a line of the table starts with the
// benchmark, case and size columns.
func tableHasRow(out, bench, name, size string) bool {
	prefix := bench + " " + name + " " + size + " "
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.Join(strings.Fields(line), " "), prefix) {
			return true
		}
	}
	return false
}

func TestBenchJSONHoldsTheRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.json")
	code, out, errs := runKern(t, "bench", "-device", "emu", "-n", "512", "-cols", "64", "-runs", "1", "-warmup", "0", "-json", path, "ops")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep benchReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !strings.Contains(rep.Device, "emu") || len(rep.Rows) == 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Rows {
		if r.Bench != "ops" || r.Unit != "thread-instr/elem" || r.Value == nil || *r.Value <= 0 {
			t.Errorf("row %+v", r)
		}
	}
	if !strings.Contains(out, "wrote "+path) {
		t.Errorf("output does not mention the file:\n%s", out)
	}
}

func TestBenchFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-device", "tpu"}, `device "tpu"`},
		{[]string{"-device", "emu", "frobnicate"}, `unknown benchmark "frobnicate"`},
		{[]string{"-memcpy-sizes", "12XB"}, "-memcpy-sizes"},
		{[]string{"-gemm-types", "f8"}, "-gemm-types"},
		{[]string{"-decode-dims", "2560,32,8,128"}, "-decode-dims"},
		{[]string{"-decode-dims", "2560,32,7,128,9728"}, "-decode-dims"},
		{[]string{"-decode-m", "0"}, "-decode-m"},
		{[]string{"-decode-ctx", "x"}, "-decode-ctx"},
		{[]string{"-attn-seq", "-1"}, "-attn-seq"},
		{[]string{"-dtype", "f64"}, "-dtype"},
		{[]string{"-device", "emu", "-n", "64", "-cols", "7", "ops"}, "must be even"},
		{[]string{"-plot", "x.svg"}, "tools/benchplot && go run . bench.json x.svg"},
	} {
		code, _, errs := runKern(t, append([]string{"bench"}, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("kern bench %v: exit %d, %q; want an error mentioning %q", c.args, code, errs, c.want)
		}
	}
}

func TestBenchHelp(t *testing.T) {
	code, _, errs := runKern(t, "bench", "-h")
	if code != 0 || !strings.Contains(errs, "usage: kern bench") || !strings.Contains(errs, "-gemm-sizes") {
		t.Errorf("kern bench -h: exit %d, %q", code, errs)
	}
}

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("4096, 4KiB,16MiB,1G")
	if err != nil || len(got) != 4 || got[0] != 4096 || got[1] != 4096 || got[2] != 16<<20 || got[3] != 1<<30 {
		t.Errorf("parseSizes = %v, %v", got, err)
	}
}

// The CUDA path of kern bench runs against package cuda's stub driver
// and package cublas's stub cuBLAS (both built here from their C sources):
// device memory is host memory, kernels do nothing and the stub cuBLAS
// multiplies on the CPU, so the figures are meaningless, but every call
// of the memcpy, gemm and ops benchmarks goes through the real plumbing.
// The driver is loaded once per process, so the benchmark runs in a child
// process (TestBenchStubChild) with KERN_LIBCUDA and KERN_LIBCUBLAS set.
func TestBenchOnTheStubDriver(t *testing.T) {
	dir := t.TempDir()
	cudaLib := cudastub.Libcuda(t)
	cublasLib := cudastub.Build(t, "libcublas_stub.so", filepath.Join("cublas", "testdata", "stub"))
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchStubChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "KERN_BENCH_STUB_CHILD="+filepath.Join(dir, "bench.json"),
		"KERN_LIBCUDA="+cudaLib, "KERN_LIBCUBLAS="+cublasLib, "KERN_DEVICE=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestBenchStubChild") {
		t.Fatalf("the child failed: %v\n%s", err, out)
	}
}

func TestBenchStubChild(t *testing.T) {
	jsonFile := os.Getenv("KERN_BENCH_STUB_CHILD")
	if jsonFile == "" {
		t.Skip("run by TestBenchOnTheStubDriver")
	}
	// ops stays out: package ops' module has more kernels than the stub
	// driver's module table holds (the emulator tests cover ops).
	code, out, errs := runKern(t, "bench", "-device", "cuda", "-runs", "2", "-warmup", "1",
		"-memcpy-sizes", "4KiB,64KiB", "-gemm-sizes", "8,16", "-decode-dims", stubDecodeDims, "-decode-ctx", "64,128", "-decode-seqs", "2",
		"-attn-seq", "64", "-json", jsonFile, "memcpy", "gemm", "attention")
	t.Log(out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"kern bench on cuda", ": Kern Stub A100 (sm_80", "DRAM peak ", " GB/s = 2 × ",
		"cuBLAS 12.4.5 from", "libcublas_stub.so", "kern Matmul bf16 16³: gemv"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	for _, size := range []string{"4 KiB", "64 KiB"} {
		for _, c := range []string{"HtoD pinned", "DtoH pinned", "HtoD pageable", "DtoH pageable", "DtoD"} {
			if !tableHasRow(out, "memcpy", c, size) {
				t.Errorf("no memcpy row %s %s", c, size)
			}
		}
	}
	for _, size := range []string{"8³", "16³"} {
		for _, c := range []string{"Sgemm f32", "GemmEx tf32", "GemmEx f16", "GemmEx bf16", "kern Matmul f16", "kern Matmul bf16"} {
			if !tableHasRow(out, "matmul", c, size) {
				t.Errorf("no matmul row %s %s", c, size)
			}
		}
	}
	checkDecodeRows(t, out, [5]int{256, 4, 2, 64, 512}, []int{1, 16})
	checkStubJSON(t, jsonFile)
	// The stub's second device reports compute capability 9.0 (an H100):
	// ops.Matmul runs its sm_90a kernel there from m = 17 up, and says so.
	code, out, errs = runKern(t, "bench", "-device", "cuda:1", "-runs", "1", "-warmup", "0",
		"-gemm-sizes", "16,256", "-gemm-types", "bf16", "gemm")
	t.Log(out)
	if code != 0 {
		t.Fatalf("cuda:1: exit %d: %s", code, errs)
	}
	// At 256³ the default is the 128×128 tile (2 wide tiles for the
	// stub's 132 SMs); the other v3 kernels get rows of their own.
	for _, w := range []string{": Kern Stub H100 (sm_90", "kern Matmul bf16 16³: gemv", "kern Matmul bf16 256³: v3 sm_90a 128x128",
		"kern Matmul bf16 128x256 256³: v3 sm_90a 128x256", "kern Matmul bf16 128x256 rowmajor 256³: v3 sm_90a 128x256 rowmajor"} {
		if !strings.Contains(out, w) {
			t.Errorf("cuda:1 output lacks %q", w)
		}
	}
	if strings.Contains(out, "kern Matmul bf16 128x128 256³") {
		t.Error("cuda:1: a 128x128 row beside a default that is 128x128")
	}
}
