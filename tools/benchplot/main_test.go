package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlotsTheJSONAsSVGAndPNG(t *testing.T) {
	for _, ext := range []string{".svg", ".png"} {
		out := filepath.Join(t.TempDir(), "bench"+ext)
		var o, e bytes.Buffer
		if code := run([]string{"testdata/bench.json", out}, &o, &e); code != 0 {
			t.Fatalf("%s: exit %d: %s", ext, code, e.String())
		}
		b, err := os.ReadFile(out)
		if err != nil || len(b) < 1000 {
			t.Fatalf("%s: %v (%d bytes)", ext, err, len(b))
		}
		if ext != ".svg" {
			continue
		}
		for _, w := range []string{"<svg", "thread-instr/elem", "GB/s", "TFLOP/s", "kern bench matmul", "kern bench attention", "% of DRAM peak", "% of cuBLAS", "decode W4A16 down"} {
			if !strings.Contains(string(b), w) {
				t.Errorf("the SVG lacks %q:\n%.300s", w, b)
			}
		}
	}
}

// Panels split a benchmark by unit, follow benchNames (the old gemm
// name included), and gather the percentages across benchmarks.
func TestPanels(t *testing.T) {
	b, err := os.ReadFile("testdata/bench.json")
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range panelsOf(rep.Rows) {
		got = append(got, fmt.Sprintf("%s|%s|%d", p.title, p.unit, len(p.rows)))
	}
	want := []string{
		"kern bench memcpy|GB/s|2",
		"kern bench matmul|TFLOP/s|2",
		"kern bench matmul|GB/s|2",
		"kern bench gemm|GFLOP/s|1",
		"kern bench ops|thread-instr/elem|2",
		"kern bench attention|TFLOP/s|1",
		"kern bench attention|GB/s|1",
		"% of the DRAM peak|% of DRAM peak|4",
		"kern / cuBLAS|% of cuBLAS|1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("panels:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: benchplot"},
		{[]string{"testdata/bench.json", filepath.Join(t.TempDir(), "x.pdf")}, 1, ".svg or .png"},
		{[]string{"main.go", filepath.Join(t.TempDir(), "x.svg")}, 1, "kern bench -json"},
	} {
		var o, e bytes.Buffer
		if code := run(c.args, &o, &e); code != c.code || !strings.Contains(e.String(), c.want) {
			t.Errorf("benchplot %v: exit %d, %q; want %d and %q", c.args, code, e.String(), c.code, c.want)
		}
	}
}
