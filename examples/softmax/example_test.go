package main

import (
	"testing"

	"github.com/gokern/kern"
)

func TestRun(t *testing.T) {
	for _, shape := range [][2]int{{5, 1000}, {3, 10}, {2, 1}} {
		for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
			if err := run(dev, shape[0], shape[1]); err != nil {
				t.Errorf("%s %dx%d: %v", dev.Kind(), shape[0], shape[1], err)
			}
		}
	}
}
