package main

import (
	"os"
	"testing"
)

// TestHelloRuns runs the README's first command on the emulator.
func TestHelloRuns(t *testing.T) {
	t.Setenv("KERN_DEVICE", "emu")
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	defer func() { os.Stdout = stdout }()
	if err := run(); err != nil {
		t.Fatal(err)
	}
}
