//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/cudastub"
)

// kern doctor's NCCL line, in child processes (NCCL loads once per
// process): with package nccl's stub library (built here from its C
// source) it names the library and its version; with none, why not.
func TestDoctorReportsNCCL(t *testing.T) {
	stub := cudastub.Build(t, "libnccl_stub.so", filepath.Join("nccl", "testdata", "stub"))
	for _, c := range []struct{ lib, want string }{
		{stub, "NCCL: " + stub + ", version 2.21.5"},
		{"/nonexistent/libnccl.so.2", "NCCL: not available (nccl: no NCCL library could be loaded"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDoctorChild$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "KERN_DOCTOR_CHILD=1", "KERN_LIBNCCL="+c.lib, "KERN_DEVICE=emu")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("KERN_LIBNCCL=%s: %v; output lacks %q:\n%s", c.lib, err, c.want, out)
		}
	}
}

func TestDoctorChild(t *testing.T) {
	if os.Getenv("KERN_DOCTOR_CHILD") == "" {
		t.Skip("run by TestDoctorReportsNCCL")
	}
	code, out, errs := runKern(t, "doctor")
	t.Log(out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
}
