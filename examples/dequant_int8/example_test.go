package main

import (
	"testing"

	"github.com/gokern/kern"
)

func TestRun(t *testing.T) {
	// 37×50: neither dimension a multiple of the 32×8 block.
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		if err := run(dev, 37, 50); err != nil {
			t.Errorf("%s: %v", dev.Kind(), err)
		}
	}
}
