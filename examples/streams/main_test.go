package main

import (
	"os"
	"testing"
)

// TestStreamsRuns runs the example on the emulator and in native mode,
// with a last chunk shorter than the others.
func TestStreamsRuns(t *testing.T) {
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	defer func() { os.Stdout = stdout }()
	for _, dev := range []string{"emu", "native"} {
		t.Setenv("KERN_DEVICE", dev)
		if err := run(5*1024+320, 1024); err != nil {
			t.Fatalf("%s: %v", dev, err)
		}
	}
}
