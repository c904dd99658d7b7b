// Command benchplot draws the JSON that `kern bench -json` writes as a bar
// chart, one panel per benchmark, in SVG or PNG by the output's extension:
//
//	go run github.com/gokern/kern/cmd/kern bench -json bench.json
//	cd tools/benchplot && go run . ../../bench.json bench.svg
//
// It is a module of its own so that gonum/plot and its fonts stay out of
// the kern command, which users add to their modules as a tool.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// report is the document kern bench -json writes (cmd/kern/bench_json.go).
type report struct {
	Device string `json:"device"`
	Rows   []row  `json:"rows"`
}

type row struct {
	Bench string   `json:"bench"`
	Name  string   `json:"name"`
	Size  string   `json:"size"`
	Value *float64 `json:"value"`
	Unit  string   `json:"unit"`
	Peak  *float64 `json:"peak_pct"`   // % of the DRAM peak, where there is one
	Ref   *float64 `json:"cublas_pct"` // matmul: % of cuBLAS on the same case
}

// benchNames orders the panels; a benchmark not named here comes after
// them. gemm is matmul's old name, in JSON written before the rename.
var benchNames = []string{"memcpy", "matmul", "gemm", "ops", "attention"}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(stdout, "usage: benchplot bench.json out.svg|out.png")
		return 0
	}
	if len(args) != 2 {
		fmt.Fprintln(stderr, "usage: benchplot bench.json out.svg|out.png")
		return 2
	}
	if err := plotFile(args[0], args[1]); err != nil {
		fmt.Fprintln(stderr, "benchplot:", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n", args[1])
	return 0
}

func plotFile(in, out string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w (want the output of kern bench -json)", in, err)
	}
	return writeBenchPlot(out, rep.Device, rep.Rows)
}
