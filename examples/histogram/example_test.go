package main

import (
	"testing"

	"github.com/gokern/kern"
)

func TestRun(t *testing.T) {
	// 10_007 bytes on 3 blocks: threads loop a different number of times.
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		if err := run(dev, 10_007, 3); err != nil {
			t.Errorf("%s: %v", dev.Kind(), err)
		}
	}
}
