package main

import (
	"testing"

	"github.com/gokern/kern"
)

func TestRun(t *testing.T) {
	// Shapes with partial tiles in every dimension, a K shorter than one
	// tile, and a single element.
	for _, s := range [][3]int{{37, 45, 70}, {20, 33, 5}, {1, 1, 1}} {
		for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
			if err := run(dev, s[0], s[1], s[2]); err != nil {
				t.Errorf("%s %v: %v", dev.Kind(), s, err)
			}
		}
	}
}
