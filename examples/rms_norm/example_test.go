package main

import (
	"testing"

	"github.com/gokern/kern"
)

func TestRun(t *testing.T) {
	// Rows longer than the block (1000, not a multiple of 256) and shorter
	// (100: most threads have no column).
	for _, shape := range [][2]int{{7, 1000}, {3, 100}} {
		for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
			if err := run(dev, shape[0], shape[1]); err != nil {
				t.Errorf("%s %dx%d: %v", dev.Kind(), shape[0], shape[1], err)
			}
		}
	}
}
