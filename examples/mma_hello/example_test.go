package main

import (
	"testing"

	"github.com/gokern/kern"
)

func TestRun(t *testing.T) {
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		if err := run(dev, false); err != nil {
			t.Errorf("%s: %v", dev.Kind(), err)
		}
	}
}
