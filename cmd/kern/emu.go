package main

// kern emu: run any PTX (clang's, nvcc's, Triton's, kern's) on the
// emulator from the command line, with buffers made from patterns or
// files, optional sanitizers and the profiler. The argument specs are
// documented in docs/emulator.md ("kern emu").

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/gokern/kern/emu"
)

const emuUsage = `usage:
  kern emu list file.ptx
  kern emu run file.ptx [-kernel NAME] [-grid X,Y,Z] [-block X,Y,Z] [-smem BYTES]
               [-arg SPEC]... [-check memcheck,racecheck,synccheck,initcheck|all] [-profile]
               [-tol T] [-seed N]
an -arg per kernel parameter, in order:
  VALUE or TYPE:VALUE          a scalar (typed by the parameter when TYPE is left out)
  TYPE[N]:INIT[:ACTION]...     a buffer of N elements; TYPE f32 f64 f16 bf16 i8 u8 i32 u32 i64 u64
     INIT   zeros | iota | rand | fill=V | file=PATH (raw little-endian)
     ACTION print | out=PATH (write it after the run) | expect=PATH (compare; floats within -tol)
`

// emuCmd dispatches kern emu's subcommands.
func emuCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, emuUsage)
		return errors.New("kern emu: want a subcommand, list or run")
	}
	switch args[0] {
	case "list":
		if len(args) != 2 {
			return errors.New("usage: kern emu list file.ptx")
		}
		return emuList(args[1], stdout)
	case "run":
		return emuRun(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, emuUsage)
		return nil
	}
	return fmt.Errorf("kern emu: unknown subcommand %q\n%s", args[0], emuUsage)
}

// loadPTX loads a module and says which entries did not load, without
// failing for them.
func loadPTX(path string, w io.Writer) (*emu.Module, error) {
	m, err := emu.LoadFile(path)
	if err != nil {
		return nil, err
	}
	for _, name := range m.BadEntries() {
		fmt.Fprintf(w, "kern emu: %s: entry %s did not load and cannot run: %v\n", path, name, m.EntryErr(name))
	}
	return m, nil
}

func emuList(path string, stdout io.Writer) error {
	m, err := loadPTX(path, stdout)
	if err != nil {
		return err
	}
	for _, e := range m.Entries() {
		var ps []string
		for _, p := range e.Params {
			ps = append(ps, fmt.Sprintf("%s .%s", p.Name, p.Type))
		}
		fmt.Fprintf(stdout, "%s(%s)", e.Name, strings.Join(ps, ", "))
		if e.ReqNTid[0] > 0 {
			fmt.Fprintf(stdout, " .reqntid %d,%d,%d", e.ReqNTid[0], max(e.ReqNTid[1], 1), max(e.ReqNTid[2], 1))
		}
		if e.StaticShared > 0 {
			fmt.Fprintf(stdout, " shared %d B", e.StaticShared)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// emuRunFlags are kern emu run's options.
type emuRunFlags struct {
	kernel, grid, block, check string
	smem                       int
	args                       []string
	profile                    bool
	tol                        float64
	seed                       uint64
}

// parseInterleaved parses flags that may come before or after the one
// positional argument (kern emu run file.ptx -kernel k, as in the docs).
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func emuRun(args []string, stdout, stderr io.Writer) error {
	var f emuRunFlags
	fs := flag.NewFlagSet("kern emu run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, emuUsage) }
	fs.StringVar(&f.kernel, "kernel", "", "entry to run (default: the module's only entry)")
	fs.StringVar(&f.grid, "grid", "1", "grid size in blocks: X[,Y[,Z]]")
	fs.StringVar(&f.block, "block", "", "block size in threads: X[,Y[,Z]] (default: the entry's .reqntid)")
	fs.IntVar(&f.smem, "smem", 0, "dynamic shared memory bytes")
	fs.Func("arg", "a kernel argument (repeat, in parameter order)", func(s string) error { f.args = append(f.args, s); return nil })
	fs.StringVar(&f.check, "check", "", "sanitizers: memcheck, racecheck, synccheck, initcheck, all (comma-separated)")
	fs.BoolVar(&f.profile, "profile", false, "print the per-instruction profile (bank conflicts, sector efficiency)")
	fs.Float64Var(&f.tol, "tol", 1e-5, "expect= tolerance for floats: |got-want| <= tol·max(1, |want|)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of rand buffers")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, emuUsage)
		return errors.New("kern emu run: want one PTX file")
	}
	path := pos[0]
	m, err := loadPTX(path, stderr)
	if err != nil {
		return err
	}
	entry, err := pickEntry(m, f.kernel)
	if err != nil {
		return fmt.Errorf("kern emu run: %s: %w", path, err)
	}
	grid, err := parseDims(f.grid)
	if err != nil {
		return fmt.Errorf("kern emu run: -grid: %w", err)
	}
	var block [3]int
	switch {
	case f.block != "":
		if block, err = parseDims(f.block); err != nil {
			return fmt.Errorf("kern emu run: -block: %w", err)
		}
	case entry.ReqNTid[0] > 0:
		block = entry.ReqNTid
		for i := range block {
			block[i] = max(block[i], 1)
		}
	default:
		return fmt.Errorf("kern emu run: %s has no .reqntid: give -block", entry.Name)
	}
	opts, err := emu.ParseChecks(f.check)
	if err != nil {
		return fmt.Errorf("kern emu run: -check: %w", err)
	}
	var prof *emu.Profile
	if f.profile {
		prof = emu.NewProfile()
		opts.Observer = prof
	}
	dev := emu.NewDevice(opts)
	dev.SetPrintf(stdout) // device-side printf
	if len(f.args) != len(entry.Params) {
		return fmt.Errorf("kern emu run: %s takes %d parameters (%s), got %d -arg", entry.Name, len(entry.Params), paramList(entry), len(f.args))
	}
	rng := rand.New(rand.NewPCG(f.seed, 0x6b65726e))
	vals := make([]any, len(f.args))
	var bufs []*emuBuffer
	for i, spec := range f.args {
		p := entry.Params[i]
		if strings.Contains(spec, "[") {
			b, err := parseBuffer(spec, rng)
			if err != nil {
				return fmt.Errorf("kern emu run: -arg %d (%s): %w", i+1, p.Name, err)
			}
			if b.addr, err = dev.Alloc(len(b.data)); err == nil {
				err = dev.Write(b.addr, b.data)
			}
			if err != nil {
				return err
			}
			b.param = p.Name
			bufs = append(bufs, b)
			vals[i] = b.addr
			continue
		}
		v, err := parseScalar(spec, p.Type)
		if err != nil {
			return fmt.Errorf("kern emu run: -arg %d (%s .%s): %w", i+1, p.Name, p.Type, err)
		}
		vals[i] = v
	}
	packed, err := entry.Pack(vals...)
	if err != nil {
		return fmt.Errorf("kern emu run: %w", err)
	}
	start := time.Now()
	err = dev.Launch(m, entry.Name, emu.LaunchConfig{Grid: grid, Block: block, DynamicShared: f.smem, Params: packed})
	elapsed := time.Since(start)
	var report *emu.Report
	if errors.As(err, &report) {
		fmt.Fprintf(stdout, "%v\n", report)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "kern emu: %s grid (%d,%d,%d) block (%d,%d,%d): %d warp-instructions in %v\n",
		entry.Name, grid[0], grid[1], grid[2], block[0], block[1], block[2], dev.WarpInstructions(), elapsed.Round(time.Microsecond))
	failed := report != nil
	for _, b := range bufs {
		if err := dev.Read(b.addr, b.data); err != nil {
			return err
		}
		ok, err := b.finish(stdout, f.tol)
		if err != nil {
			return err
		}
		failed = failed || !ok
	}
	if prof != nil {
		if err := prof.WriteReport(stdout); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	if failed {
		return errors.New("kern emu run: the run did not pass its checks")
	}
	return nil
}

func pickEntry(m *emu.Module, name string) (emu.EntryInfo, error) {
	if name != "" {
		if e, ok := m.Entry(name); ok {
			return e, nil
		}
		if err := m.EntryErr(name); err != nil {
			return emu.EntryInfo{}, err
		}
		return emu.EntryInfo{}, fmt.Errorf("no entry %q (kern emu list shows them)", name)
	}
	es := m.Entries()
	if len(es) != 1 {
		var names []string
		for _, e := range es {
			names = append(names, e.Name)
		}
		return emu.EntryInfo{}, fmt.Errorf("%d entries (%s): choose one with -kernel", len(es), strings.Join(names, ", "))
	}
	return es[0], nil
}

func paramList(e emu.EntryInfo) string {
	var ps []string
	for _, p := range e.Params {
		ps = append(ps, p.Name+" ."+p.Type)
	}
	return strings.Join(ps, ", ")
}

func parseDims(s string) ([3]int, error) {
	d := [3]int{1, 1, 1}
	parts := strings.Split(s, ",")
	if len(parts) > 3 {
		return d, fmt.Errorf("%q: at most three dimensions", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return d, fmt.Errorf("%q: want positive integers X[,Y[,Z]]", s)
		}
		d[i] = n
	}
	return d, nil
}

// parseScalar reads VALUE, typed by the parameter's PTX type, or
// TYPE:VALUE.
func parseScalar(spec, ptype string) (any, error) {
	typ, val := ptype, spec
	if t, v, ok := strings.Cut(spec, ":"); ok {
		typ, val = t, v
	}
	switch typ {
	case "f32":
		f, err := strconv.ParseFloat(val, 32)
		return float32(f), err
	case "f64":
		return strconv.ParseFloat(val, 64)
	case "pred":
		return strconv.ParseBool(val)
	}
	if len(typ) < 2 || !strings.ContainsRune("subi", rune(typ[0])) {
		return nil, fmt.Errorf("unknown scalar type %q", typ)
	}
	if strings.HasPrefix(val, "-") {
		return strconv.ParseInt(val, 0, 64)
	}
	return strconv.ParseUint(val, 0, 64)
}
