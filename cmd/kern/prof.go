package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// prof runs a Go program on the emulator with the profiler on and prints
// its report: per instruction, executions, shared-memory bank conflicts
// and global sector efficiency, with the Go line each came from. The
// program must open its device with kern.Open (or kern.OpenEmulator with no
// options) and Close it; the report is written at Close.
func prof(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kern prof", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "also write the report to this file")
	check := fs.String("check", "", "sanitizers to run as well: all, memcheck, racecheck")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		return fmt.Errorf("usage: kern prof [-o file] [-check all] ./pkg [program args]")
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
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kern prof: %s: %w", fs.Arg(0), err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		return fmt.Errorf("kern prof: the program wrote no profile (does it Close its kern.Device?): %w", err)
	}
	fmt.Fprintf(stdout, "\n== kern prof %s (emulator profile) ==\n%s", fs.Arg(0), b)
	if *out != "" {
		return os.WriteFile(*out, b, 0o644)
	}
	return nil
}
