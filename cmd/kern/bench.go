package main

// kern bench: baseline figures for the device kern runs on.
//
// Four benchmarks, each in its own file:
//
//	memcpy    (bench_memcpy.go)     host↔device and device↔device copy bandwidth (CUDA only)
//	matmul    (bench_gemm.go)       cuBLAS Sgemm and GemmEx TFLOP/s, and ops.Matmul beside
//	                                the f16 and bf16 cases with its % of cuBLAS (CUDA only);
//	          (bench_decode.go)     decode GEMVs (M = 1, 16) on a model's projections in
//	                                bf16, W4A16 and W8A8: GB/s of weights (every device)
//	                                "gemm", its old name, is an alias
//	ops       (bench_ops.go)        package ops' memory-bound kernels: bandwidth on a GPU,
//	                                instructions per element on the emulator
//	attention (bench_attention.go)  FlashAttention prefill TFLOP/s, PagedAttention decode GB/s
//
// GPU work is timed with CUDA events around each run, after warm-up runs,
// and the median of the timed runs is reported. Figures are printed, never
// checked: a benchmark fails only when the work itself fails. The table
// (and -json's rows) is the same on every device; rows a device cannot
// produce become notes under it. Charts are drawn from -json's file by
// tools/benchplot, a module of its own so that its plotting dependencies
// stay out of this command.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/emu"
)

const benchUsage = `usage: kern bench [flags] [memcpy] [matmul] [ops] [attention]

Runs the named benchmarks (all four by default; gemm is matmul's old
name) on the device kern.Open picks ($KERN_DEVICE, else the first GPU)
or the one -device names, and prints a table. See docs/performance.md
for what each figure means.

flags:
`

// benchConfig is what the flags say.
type benchConfig struct {
	device      string
	runs        int
	warmup      int
	json        string
	memcpySizes []int // bytes
	gemmSizes   []int // M = N = K
	gemmTypes   []string
	decodeDims  [5]int // hidden, heads, KV heads, head dim, intermediate; zero: by device
	decodeM     []int  // rows of x of the decode rows
	decodeCtx   []int  // attention decode context lengths; nil: by device
	attnSeq     int    // attention prefill tokens per sequence; 0: by device
	decodeSeqs  int    // attention decode sequences per row; 0: by device and context
	opsN        int    // elements per op; 0: 1<<24 on a GPU, 1<<12 elsewhere
	opsCols     int    // row length of the row ops; 0: 4096 on a GPU, 256 elsewhere
	opsDtype    string
}

// benchRow is one line of the table.
type benchRow struct {
	bench string  // "memcpy", "gemm", "ops"
	name  string  // what ran: "HtoD pinned", "Sgemm f32", "RMSNorm"
	size  string  // how much: "16 MiB", "4096³", "16M"
	time  float64 // median seconds per run
	value float64 // the figure, in unit
	unit  string  // "GB/s", "GFLOP/s", "thread-instr/elem", ...
	peak  float64 // percent of the device's peak, or NaN when there is none
	ref   float64 // percent of cuBLAS on the same case, or 0 when there is none
	note  string
}

// benchEnv is the device under test and what the benchmarks share.
type benchEnv struct {
	cfg benchConfig
	dev *kern.Device
	// CUDA only: the driver device, its description and the DRAM peak in
	// bytes per second (2 × memory clock × bus width / 8).
	cudaDev cuda.Device
	info    cuda.DeviceInfo
	peakBW  float64
	rows    []benchRow
	notes   []string
	failed  []error
}

func (e *benchEnv) add(r benchRow) { e.rows = append(e.rows, r) }
func (e *benchEnv) notef(format string, args ...any) {
	e.notes = append(e.notes, fmt.Sprintf(format, args...))
}
func (e *benchEnv) isCUDA() bool                          { return e.dev.Kind() == "cuda" }
func (e *benchEnv) pctOfPeak(bytesPerSec float64) float64 { return pct(bytesPerSec, e.peakBW) }

func pct(v, peak float64) float64 {
	if peak <= 0 {
		return math.NaN()
	}
	return 100 * v / peak
}

var benchNames = []string{"memcpy", "matmul", "ops", "attention"}

// benchAliases are older names of benchmarks.
var benchAliases = map[string]string{"gemm": "matmul"}

func bench(args []string, stdout, stderr io.Writer) error {
	cfg, names, err := parseBenchFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // the flag package printed the usage
	}
	if err != nil {
		return err
	}
	env, err := openBenchDevice(cfg)
	if err != nil {
		return err
	}
	defer env.dev.Close()
	fmt.Fprintf(stdout, "kern bench on %s\n", env.dev)
	switch {
	case env.isCUDA() && env.peakBW > 0:
		fmt.Fprintf(stdout, "  DRAM peak %.0f GB/s = 2 × %d MHz × %d bit / 8\n",
			env.peakBW/1e9, env.info.MemoryClockRateKHz/1000, env.info.MemoryBusWidth)
	case env.isCUDA():
		fmt.Fprintln(stdout, "  DRAM peak unknown: the driver reports no memory clock or bus width; no % of peak")
	}
	fmt.Fprintf(stdout, "  median of %d runs after %d warm-up runs\n\n", cfg.runs, cfg.warmup)
	// A failing benchmark does not stop the others; the failures are
	// reported after the table and make the command fail.
	for _, name := range names {
		var err error
		switch name {
		case "memcpy":
			err = benchMemcpy(env)
		case "matmul":
			err = benchMatmul(env)
		case "ops":
			err = benchOps(env)
		case "attention":
			err = benchAttention(env)
		}
		if err != nil {
			env.failed = append(env.failed, fmt.Errorf("kern bench %s: %w", name, err))
		}
	}
	writeBenchTable(stdout, env.rows)
	if len(env.notes) > 0 {
		fmt.Fprintln(stdout)
		for _, n := range env.notes {
			fmt.Fprintln(stdout, n)
		}
	}
	if cfg.json != "" {
		if err := writeBenchJSON(cfg.json, env.dev.String(), env.rows, env.notes); err != nil {
			return fmt.Errorf("kern bench -json: %w", err)
		}
		fmt.Fprintf(stdout, "\nwrote %s (chart it with: cd tools/benchplot && go run . %[1]s out.svg)\n", cfg.json)
	}
	return errors.Join(env.failed...)
}

func parseBenchFlags(args []string, stderr io.Writer) (benchConfig, []string, error) {
	var cfg benchConfig
	fs := flag.NewFlagSet("kern bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.device, "device", "", "emu, native, cuda or cuda:N (default: $KERN_DEVICE, else cuda)")
	fs.IntVar(&cfg.runs, "runs", 10, "timed runs per case; the median is reported")
	fs.IntVar(&cfg.warmup, "warmup", 3, "untimed runs before the timed ones")
	fs.StringVar(&cfg.json, "json", "", "also write the rows to this file as JSON (tools/benchplot draws it)")
	memcpySizes := fs.String("memcpy-sizes", "1MiB,16MiB,256MiB", "memcpy: bytes per copy, comma-separated (KiB, MiB, GiB suffixes)")
	gemmSizes := fs.String("gemm-sizes", "1024,2048,4096,8192", "matmul: square sizes M=N=K, comma-separated")
	gemmTypes := fs.String("gemm-types", "f32,tf32,f16,bf16", "matmul: Sgemm f32, GemmEx tf32 (f32 data, TF32 tensor cores), f16, bf16 (16-bit data, f32 accumulation)")
	decodeDims := fs.String("decode-dims", "", "matmul decode rows: hidden,heads,kvHeads,headDim,intermediate (default Qwen3-4B's 2560,32,8,128,9728 on a GPU, 256,4,2,32,384 elsewhere)")
	decodeM := fs.String("decode-m", "1,16", "matmul decode rows: rows of x, comma-separated (at most 16 is the GEMV)")
	decodeCtx := fs.String("decode-ctx", "", "attention decode rows: context lengths, comma-separated (default 1024,4096,16384,32768 on a GPU, 256,512 elsewhere)")
	fs.IntVar(&cfg.decodeSeqs, "decode-seqs", 0, "attention decode rows: sequences per row (default: 256Ki tokens in all on a GPU, 512 elsewhere, over the context length)")
	fs.IntVar(&cfg.attnSeq, "attn-seq", 0, "attention prefill: tokens per sequence (default 4096 on a GPU, 128 elsewhere)")
	fs.IntVar(&cfg.opsN, "n", 0, "ops: elements per op (default 16Mi on a GPU, 4Ki on emu and native)")
	fs.IntVar(&cfg.opsCols, "cols", 0, "ops: row length of the row ops (default 4096 on a GPU, 256 elsewhere)")
	fs.StringVar(&cfg.opsDtype, "dtype", "f32", "ops: element type, f32, f16 or bf16 (attention: f16 unless bf16)")
	plot := fs.String("plot", "", "removed: write -json and draw it with tools/benchplot")
	if err := fs.Parse(args); err != nil {
		return cfg, nil, err
	}
	if *plot != "" {
		return cfg, nil, fmt.Errorf("kern bench -plot moved out of the kern command (so that its plotting libraries stay out of your module): run kern bench -json bench.json, then in kern's repository: cd tools/benchplot && go run . bench.json %s", *plot)
	}
	var err error
	if cfg.memcpySizes, err = parseSizes(*memcpySizes); err != nil {
		return cfg, nil, fmt.Errorf("kern bench -memcpy-sizes: %w", err)
	}
	if cfg.gemmSizes, err = parseSizes(*gemmSizes); err != nil {
		return cfg, nil, fmt.Errorf("kern bench -gemm-sizes: %w", err)
	}
	if *decodeDims != "" {
		d, err := parseSizes(*decodeDims)
		if err != nil || len(d) != 5 || d[1]%d[2] != 0 {
			return cfg, nil, fmt.Errorf("kern bench -decode-dims %q: want hidden,heads,kvHeads,headDim,intermediate, five positive sizes with heads a multiple of kvHeads", *decodeDims)
		}
		copy(cfg.decodeDims[:], d)
	}
	if cfg.decodeM, err = parseSizes(*decodeM); err != nil {
		return cfg, nil, fmt.Errorf("kern bench -decode-m: %w", err)
	}
	if *decodeCtx != "" {
		if cfg.decodeCtx, err = parseSizes(*decodeCtx); err != nil {
			return cfg, nil, fmt.Errorf("kern bench -decode-ctx: %w", err)
		}
	}
	for _, t := range strings.Split(*gemmTypes, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains([]string{"f32", "tf32", "f16", "bf16"}, t) {
			return cfg, nil, fmt.Errorf("kern bench -gemm-types: %q is not f32, tf32, f16 or bf16", t)
		}
		cfg.gemmTypes = append(cfg.gemmTypes, t)
	}
	if !slices.Contains([]string{"f32", "f16", "bf16"}, cfg.opsDtype) {
		return cfg, nil, fmt.Errorf("kern bench -dtype: %q is not f32, f16 or bf16", cfg.opsDtype)
	}
	if cfg.runs < 1 || cfg.warmup < 0 || cfg.opsN < 0 || cfg.opsCols < 0 || cfg.attnSeq < 0 || cfg.decodeSeqs < 0 {
		return cfg, nil, fmt.Errorf("kern bench: -runs must be ≥ 1, -warmup, -n, -cols, -attn-seq and -decode-seqs ≥ 0")
	}
	var names []string
	for _, n := range fs.Args() {
		if a, ok := benchAliases[n]; ok {
			n = a
		}
		if !slices.Contains(benchNames, n) {
			return cfg, nil, fmt.Errorf("kern bench: unknown benchmark %q (want %s)", n, strings.Join(benchNames, ", "))
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		names = benchNames
	}
	return cfg, names, nil
}

// parseSizes reads "1024,4KiB,16MiB".
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		mult := 1
		for _, u := range []struct {
			suffix string
			mult   int
		}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
			if strings.HasSuffix(f, u.suffix) {
				f, mult = strings.TrimSuffix(f, u.suffix), u.mult
				break
			}
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive size", f)
		}
		out = append(out, n*mult)
	}
	return out, nil
}

// openBenchDevice opens what -device (or $KERN_DEVICE, as kern.Open reads
// it) names. The emulator is opened without a profiler; sanitizers that
// KERN_EMU_CHECK turns on are merged in by kern.OpenEmulator (and timed
// too), which says so on stderr.
func openBenchDevice(cfg benchConfig) (*benchEnv, error) {
	spec := cfg.device
	if spec == "" {
		spec = strings.TrimSpace(os.Getenv("KERN_DEVICE"))
	}
	env := &benchEnv{cfg: cfg}
	switch {
	case spec == "emu":
		env.dev = kern.OpenEmulator(emu.Options{})
		return env, nil
	case spec == "native":
		env.dev = kern.OpenNative()
		return env, nil
	case spec == "" || spec == "cuda" || strings.HasPrefix(spec, "cuda:"):
	default:
		return nil, fmt.Errorf("kern bench: device %q: want emu, native, cuda or cuda:N", spec)
	}
	ordinal := 0
	if rest, ok := strings.CutPrefix(spec, "cuda:"); ok {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("kern bench: device %q: want cuda:N with N a device ordinal", spec)
		}
		ordinal = n
	}
	dev, err := kern.OpenCUDA(ordinal)
	if err != nil {
		if errors.Is(err, kern.ErrNoDriver) {
			return nil, fmt.Errorf("kern bench: no GPU (%v); run `kern bench -device emu` for the emulator's figures", err)
		}
		return nil, err
	}
	env.dev = dev
	// kern.OpenCUDA initialized the driver; the benchmarks that bypass
	// kern's Device (memcpy, gemm) use the same device and primary context.
	if env.cudaDev, err = cuda.DeviceGet(ordinal); err == nil {
		env.info, err = env.cudaDev.Info()
	}
	if err != nil {
		dev.Close()
		return nil, fmt.Errorf("kern bench: %w", err)
	}
	env.peakBW = 2 * float64(env.info.MemoryClockRateKHz) * 1e3 * float64(env.info.MemoryBusWidth) / 8
	return env, nil
}

// median returns the median of xs (xs is sorted in place).
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// timeRuns calls run warmup times, then runs times, and returns the median
// of the durations run reports.
func timeRuns(cfg benchConfig, run func() (time.Duration, error)) (float64, error) {
	for range cfg.warmup {
		if _, err := run(); err != nil {
			return 0, err
		}
	}
	ts := make([]float64, cfg.runs)
	for i := range ts {
		d, err := run()
		if err != nil {
			return 0, err
		}
		ts[i] = d.Seconds()
	}
	return median(ts), nil
}

// timeOnStream runs work between two events recorded on s.
func timeOnStream(s *kern.Stream, work func() error) (time.Duration, error) {
	start, err := s.Record()
	if err != nil {
		return 0, err
	}
	defer start.Close()
	if err := work(); err != nil {
		return 0, err
	}
	stop, err := s.Record()
	if err != nil {
		return 0, err
	}
	defer stop.Close()
	return kern.Elapsed(start, stop)
}

func writeBenchTable(w io.Writer, rows []benchRow) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "benchmark\tcase\tsize\tmedian time\trate\tunit\t%% of peak\t%% of cuBLAS\t\n")
	for _, r := range rows {
		peak, ref := "-", "-"
		if !math.IsNaN(r.peak) {
			peak = fmt.Sprintf("%.1f%%", r.peak)
		}
		if r.ref > 0 && !math.IsInf(r.ref, 0) {
			ref = fmt.Sprintf("%.1f%%", r.ref)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.bench, r.name, r.size, fmtSeconds(r.time), fmtRate(r.value), r.unit, peak, ref)
	}
	tw.Flush()
	for _, r := range rows {
		if r.note != "" {
			fmt.Fprintf(w, "  %s %s %s: %s\n", r.bench, r.name, r.size, r.note)
		}
	}
}

func fmtSeconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.3f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.3f ms", s*1e3)
	default:
		return fmt.Sprintf("%.2f µs", s*1e6)
	}
}

func fmtRate(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// fmtBytes writes a size as "16 MiB".
func fmtBytes(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// fmtCount writes an element count as "16Mi" or "4096".
func fmtCount(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMi", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKi", n>>10)
	}
	return strconv.Itoa(n)
}
