package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/internal/ptxas"
)

// prof runs a Go program on the emulator with the profiler on and prints
// its report: per instruction, executions, shared-memory bank conflicts
// and global sector efficiency, with the Go line each came from. The
// program must open its device with kern.Open (or kern.OpenEmulator with no
// options) and Close it; the report is written at Close.
const profUsage = `usage: kern prof [-o file] [-check all] [-latency] ./pkg [program args]

Builds and runs the program ./pkg (with its arguments) on the emulator and
prints the profile of every kernel it launched; with -latency also the
emulator's latency model of each (an H100's latencies: the round trips to
memory on each kernel's critical chain, with their Go lines).

flags:
`

func prof(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kern prof", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), profUsage)
		fs.PrintDefaults()
	}
	out := fs.String("o", "", "also write the report to this file")
	check := fs.String("check", "", "sanitizers to run as well: all, or a comma-separated list of memcheck, racecheck, synccheck")
	latency := fs.Bool("latency", false, "also price each kernel on the emulator's latency model (emu.Latency, an H100's figures)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := emu.ParseChecks(*check); err != nil {
		return fmt.Errorf("kern prof -check: %w", err)
	}
	if fs.NArg() < 1 {
		return fmt.Errorf("usage: kern prof [-o file] [-check all] [-latency] ./pkg [program args]")
	}
	dir, err := os.MkdirTemp("", "kern-prof")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	report := filepath.Join(dir, "profile.txt")
	cmd := exec.Command("go", append([]string{"run", fs.Arg(0)}, fs.Args()[1:]...)...)
	cmd.Env = append(os.Environ(), "KERN_DEVICE=emu", "KERN_EMU_PROFILE="+report)
	if *check != "" {
		cmd.Env = append(cmd.Env, "KERN_EMU_CHECK="+*check)
	}
	latencyReport := filepath.Join(dir, "latency.txt")
	if *latency {
		cmd.Env = append(cmd.Env, "KERN_EMU_LATENCY="+latencyReport)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kern prof: %s: %w", fs.Arg(0), err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		return fmt.Errorf("kern prof: the program wrote no profile (does it Close its kern.Device?): %w", err)
	}
	fmt.Fprintf(stdout, "\n== kern prof %s (emulator profile) ==\n%s", fs.Arg(0), b)
	if ptx, err := os.ReadFile(report + ".ptx"); err == nil {
		var occ bytes.Buffer
		occupancyReport(&occ, ptx)
		stdout.Write(occ.Bytes())
		b = append(b, occ.Bytes()...)
	}
	if *latency {
		l, err := os.ReadFile(latencyReport)
		if err != nil {
			return fmt.Errorf("kern prof: the program wrote no latency report (does it Close its kern.Device?): %w", err)
		}
		l = append([]byte("\n"), l...)
		stdout.Write(l)
		b = append(b, l...)
	}
	if *out != "" {
		return os.WriteFile(*out, b, 0o644)
	}
	return nil
}

// occupancyReport assembles each module the program loaded and prints,
// per kernel, the registers and shared memory ptxas reports and the
// theoretical occupancy at the kernel's .maxntid (256 threads without
// one). Without ptxas it says how to get it.
func occupancyReport(w io.Writer, file []byte) {
	if _, err := ptxas.Find(); err != nil {
		fmt.Fprintln(w, "\n(occupancy: ptxas not found; scripts/fetch-ptxas.sh fetches it)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nkernel\tregisters\tshared bytes\tthreads/block\ttheoretical occupancy")
	for _, mod := range strings.Split(string(file), "//kern:module ")[1:] {
		header, ptx, _ := strings.Cut(mod, "\n")
		fields := strings.Fields(header)
		if len(fields) != 2 {
			continue
		}
		arch := fields[1]
		rep, err := ptxas.Assemble([]byte(ptx), arch, ptxas.AllowSpills())
		if err != nil {
			fmt.Fprintf(tw, "%s\t(ptxas: %v)\n", fields[0], err)
			continue
		}
		for _, f := range rep.Entries() {
			threads := maxNTid(ptx, f.Name)
			occ := occupancyText(arch, f.Registers, f.SharedBytes, threads)
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", f.Name, f.Registers, f.SharedBytes, threads, occ)
		}
	}
	tw.Flush()
}

// maxNTid returns the thread count of an entry's .maxntid directive, or
// 256 when it has none.
func maxNTid(ptx, entry string) int {
	i := strings.Index(ptx, ".entry "+entry+"(")
	if i < 0 {
		return 256
	}
	rest := ptx[i:]
	if body := strings.Index(rest, "{"); body >= 0 {
		rest = rest[:body]
	}
	j := strings.Index(rest, ".maxntid ")
	if j < 0 {
		return 256
	}
	n := 1
	for _, f := range strings.Split(strings.SplitN(rest[j+len(".maxntid "):], "\n", 2)[0], ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && v > 0 {
			n *= v
		}
	}
	return n
}
