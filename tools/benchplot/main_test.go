package main

import (
	"bytes"
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
		if ext == ".svg" && (!strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "thread-instr/elem") || !strings.Contains(string(b), "GB/s")) {
			t.Errorf("the SVG is not the chart:\n%.300s", b)
		}
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
