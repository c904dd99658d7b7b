package main

import (
	"testing"

	"github.com/gokern/kern"
)

func TestRun(t *testing.T) {
	// 100_003 elements on 7 blocks: partial warps in the last block's
	// stride, and a second pass where only 7 of 256 threads have a sum.
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		if err := run(dev, 100_003, 7); err != nil {
			t.Errorf("%s: %v", dev.Kind(), err)
		}
	}
}
