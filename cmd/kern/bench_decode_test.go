package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
)

// stubDecodeDims is a layer small enough for the stub driver, whose
// device memory is host memory.
const stubDecodeDims = "256,4,2,64,512"

// checkDecodeRows checks that the table has every decode row of the
// layer dims at each m, in GB/s with a finite positive rate, and the bf16
// rows of the old GEMV ("… (old)") and of v3 ("… (v3)").
func checkDecodeRows(t *testing.T, out string, dims [5]int, ms []int) {
	t.Helper()
	for _, p := range decodeProjs(dims) {
		for _, f := range append(slices.Clone(decodeFormats), "bf16 old", "bf16 v3") {
			for _, m := range ms {
				name, size := "decode "+f+" "+p.name, fmt.Sprintf("%d×%d×%d", m, p.n, p.k)
				if v, ok := strings.CutPrefix(f, "bf16 "); ok {
					name = "decode bf16 " + p.name + " (" + v + ")"
				}
				r, ok := tableRow(out, "matmul", name, size)
				if !ok {
					t.Errorf("no matmul row %s %s", name, size)
					continue
				}
				if r.unit != "GB/s" || !(r.value > 0) || math.IsInf(r.value, 0) {
					t.Errorf("matmul %s %s: rate %v %s, want finite GB/s", name, size, r.value, r.unit)
				}
			}
		}
	}
	// The layer rows stream as many layers as twice the device's L2
	// takes (off CUDA one).
	for _, m := range ms {
		r, ok := layerRow(out, m)
		if !ok {
			t.Errorf("no matmul row decode bf16 layer %d×layer×L", m)
			continue
		}
		if r.unit != "GB/s" || !(r.value > 0) || math.IsInf(r.value, 0) {
			t.Errorf("matmul decode bf16 layer %d×layer×L: rate %v %s, want finite GB/s", m, r.value, r.unit)
		}
	}
}

// layerRow finds the decode layer row of m rows, whatever its layer count.
func layerRow(out string, m int) (parsedRow, bool) {
	for l := 1; l <= 1024; l++ {
		if r, ok := tableRow(out, "matmul", "decode bf16 layer", fmt.Sprintf("%d×layer×%d", m, l)); ok {
			return r, true
		}
	}
	return parsedRow{}, false
}

func TestDecodeLayers(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		layer    float64
		l2, want int
	}{
		{202 * mb, 50 * mb, 1}, // Qwen3-4B on an H100: one layer is twice the L2
		{31.5 * mb, 50 * mb, 4},
		{1.2 * mb, 40 * mb, 67},
		{1.2 * mb, 0, 1}, // off CUDA
	} {
		if got := decodeLayers(c.layer, c.l2); got != c.want {
			t.Errorf("decodeLayers(%g MB, L2 %d MB) = %d, want %d", c.layer/mb, c.l2/mb, got, c.want)
		}
	}
}

// parsedRow is a table line read back: the rate and unit after the case
// and size columns.
type parsedRow struct {
	value float64
	unit  string
}

// tableRow finds the line of bench, name and size and reads its rate and
// unit (the time column is two fields: "1.5 ms").
func tableRow(out, bench, name, size string) (parsedRow, bool) {
	prefix := bench + " " + name + " " + size + " "
	for _, line := range strings.Split(out, "\n") {
		l := strings.Join(strings.Fields(line), " ")
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			f := strings.Fields(rest)
			if len(f) < 4 {
				return parsedRow{}, false
			}
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				v = math.NaN()
			}
			return parsedRow{value: v, unit: f[3]}, true
		}
	}
	return parsedRow{}, false
}

// checkStubJSON checks the -json rows of the stub run: on a CUDA device
// every decode row (matmul and attention) has GB/s and a % of the DRAM
// peak, every matmul decode row names its kernel, and kern's square rows
// have TFLOP/s and their % of cuBLAS.
func checkStubJSON(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep benchReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var decode, sweep, attn, kernSquare, layer int
	for _, r := range rep.Rows {
		pos := func(p *float64) bool { return p != nil && *p > 0 }
		switch {
		case r.Bench == "matmul" && strings.Contains(r.Name, " (v3 split "):
			// v3's sweep: the note names the split count the row forced.
			sweep++
			sp := r.Name[strings.LastIndex(r.Name, " ")+1 : len(r.Name)-1]
			if r.Unit != "GB/s" || !pos(r.Value) || r.Note != "gemv v3 split "+sp {
				t.Errorf("decode sweep row %+v: want GB/s and the note gemv v3 split %s", r, sp)
			}
		case r.Bench == "matmul" && strings.HasPrefix(r.Name, "decode bf16 layer"):
			// The layer rows: the stub's 256×…×512 layer (1.2 MB) and its
			// L2 say how many layers stream; the note says per layer.
			layer++
			if r.Unit != "GB/s" || !pos(r.Value) || !pos(r.Peak) || !strings.Contains(r.Note, "µs a layer") || !strings.Contains(r.Size, "×layer×") {
				t.Errorf("decode layer row %+v: want GB/s, a %% of peak, M×layer×L and the time a layer", r)
			}
		case r.Bench == "matmul" && strings.HasPrefix(r.Name, "decode "):
			decode++
			if r.Unit != "GB/s" || !pos(r.Value) || !pos(r.Peak) || r.Note == "" {
				t.Errorf("decode row %+v: want GB/s, a %% of peak and the kernel", r)
			}
			if bf := strings.HasPrefix(r.Name, "decode bf16 "); bf && strings.HasSuffix(r.Name, " (old)") != (r.Note == "gemv v1") {
				t.Errorf("decode row %+v: want the note gemv v1 exactly on the (old) rows", r)
			}
			if bf := strings.HasPrefix(r.Name, "decode bf16 "); bf && strings.HasSuffix(r.Name, " (v3)") != strings.HasPrefix(r.Note, "gemv v3 split ") {
				t.Errorf("decode row %+v: want the note gemv v3 split S exactly on the (v3) rows", r)
			}
		case r.Bench == "matmul" && strings.HasPrefix(r.Name, "kern Matmul"):
			kernSquare++
			if r.Unit != "TFLOP/s" || !pos(r.Value) || !pos(r.Ref) || r.Note == "" {
				t.Errorf("kern Matmul row %+v: want TFLOP/s, a %% of cuBLAS and the kernel", r)
			}
		case r.Bench == "matmul":
			if r.Unit != "TFLOP/s" || !pos(r.Value) || r.Ref != nil {
				t.Errorf("cuBLAS row %+v", r)
			}
		case r.Bench == "attention" && strings.HasPrefix(r.Name, "decode"):
			attn++
			if r.Unit != "GB/s" || !pos(r.Value) || !pos(r.Peak) {
				t.Errorf("attention decode row %+v: want GB/s and a %% of peak", r)
			}
		}
	}
	// Attention: 6 decode rows (v3, v2, v1, each unsplit and split-K) at
	// contexts 64 and 128, and split-K at DecodePartition's choice at 128
	// (2 splits of 64 on the stub's 108 SMs; at 64 it is unsplit).
	// v3's sweep: every plan of the stub's small layer is 1 split (K ≤ 512,
	// under 32 chunks a split), so each projection and m times 2, 4 and 8.
	// The layer rows: stream and graph at m = 1 and 16.
	if decode != 4*(len(decodeFormats)+2)*2 || sweep != 4*2*3 || attn != 13 || kernSquare != 4 || layer != 4 {
		t.Errorf("%d matmul decode rows, %d of v3's sweep, %d attention decode rows, %d kern Matmul rows, %d layer rows; want 40 (bf16 three times), 24, 13, 4, 4", decode, sweep, attn, kernSquare, layer)
	}
}

// gemm is matmul's old name: it runs the matmul benchmark, once.
func TestBenchGemmIsAnAlias(t *testing.T) {
	var stderr strings.Builder
	_, names, err := parseBenchFlags([]string{"gemm", "ops", "matmul"}, &stderr)
	if err != nil || strings.Join(names, ",") != "matmul,ops" {
		t.Errorf("names %v, %v; want matmul,ops", names, err)
	}
	cfg, names, err := parseBenchFlags(nil, &stderr)
	if err != nil || strings.Join(names, ",") != "memcpy,matmul,ops,attention" || cfg.decodeDims != [5]int{} || len(cfg.decodeM) != 2 {
		t.Errorf("defaults %v %+v, %v", names, cfg, err)
	}
	cfg, _, err = parseBenchFlags([]string{"-decode-dims", "4096,32,8,128,12288", "-decode-ctx", "8K"}, &stderr)
	if err != nil || cfg.decodeDims != [5]int{4096, 32, 8, 128, 12288} || len(cfg.decodeCtx) != 1 || cfg.decodeCtx[0] != 8192 {
		t.Errorf("-decode-dims, -decode-ctx: %+v, %v", cfg, err)
	}
}

// The decode shapes are Qwen3-4B's projections, and the weight bytes
// are the formats' storage.
func TestDecodeShapes(t *testing.T) {
	got := fmt.Sprint(decodeProjs(qwen3_4BDims))
	if want := "[{qkv 6144 2560} {o 2560 4096} {gate/up 19456 2560} {down 2560 9728}]"; got != want {
		t.Errorf("Qwen3-4B projections %s, want %s", got, want)
	}
	for _, c := range []struct {
		format string
		want   float64
	}{{"bf16", 2560 * 9728 * 2}, {"W4A16", 2560*9728/2 + 2560*76*4}, {"W8A8", 2560*9728 + 2560*4}} {
		if got := weightBytes(c.format, 2560, 9728); got != c.want {
			t.Errorf("%s: %v bytes, want %v", c.format, got, c.want)
		}
	}
}

// The L2 flush reads twice the L2 (an Argmax over it) on any device; with
// no L2 it does nothing.
func TestL2Flush(t *testing.T) {
	dev := kern.OpenEmulator(emu.Options{})
	defer dev.Close()
	f, err := newL2Flush(dev, 3*flushCols*4)
	if err != nil {
		t.Fatal(err)
	}
	defer f.free()
	xs := make([]float32, f.rows*f.cols)
	for r := range f.rows {
		xs[r*f.cols+(r*977)%f.cols] = 1 // the row's argmax
	}
	if err := f.x.CopyFrom(xs); err != nil {
		t.Fatal(err)
	}
	if err := f.run(dev); err != nil {
		t.Fatal(err)
	}
	got, err := f.out.Download()
	if err != nil || f.rows*f.cols*4 < 2*3*flushCols*4 || len(got) != f.rows {
		t.Fatalf("flush of %d×%d floats: %v, %v", f.rows, f.cols, err, got)
	}
	for r, g := range got {
		if int(g) != (r*977)%f.cols {
			t.Errorf("row %d: argmax %d, want %d: the flush did not read the whole buffer", r, g, (r*977)%f.cols)
		}
	}
	none, err := newL2Flush(dev, 0)
	if err != nil || none.run(dev) != nil || none.x != nil {
		t.Errorf("no L2: %+v, %v", none, err)
	}
	none.free()
}
