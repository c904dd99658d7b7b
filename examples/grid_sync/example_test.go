package main

import (
	"testing"

	"github.com/gokern/kern"
)

func TestRun(t *testing.T) {
	// An odd number of cells and of steps (the result in v), a grid of
	// 4 blocks of which the last is partly past the end.
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		if err := run(dev, 1000, 37); err != nil {
			t.Errorf("%s: %v", dev.Kind(), err)
		}
	}
}
