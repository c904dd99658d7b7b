package main

import (
	"testing"

	"github.com/gokern/kern"
)

func TestRun(t *testing.T) {
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		// 70_001 is not a multiple of the block or the grid: the last
		// block is partial and some threads loop once more than others.
		if err := run(dev, 70_001); err != nil {
			t.Errorf("%s: %v", dev.Kind(), err)
		}
	}
}
