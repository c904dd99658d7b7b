package main

import (
	"testing"

	"github.com/gokern/kern"
)

func TestRun(t *testing.T) {
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		// 1000 pads to 1024: the last group is partly zeros.
		if err := run(dev, 1000); err != nil {
			t.Errorf("%s: %v", dev.Kind(), err)
		}
	}
}

// TestPack6Layout pins the bit layout drawn in kernels.go.
func TestPack6Layout(t *testing.T) {
	// a=1, b=-1 (0b111111), c=-32 (0b100000), d=31 (0b011111):
	// w = 1 | 63<<6 | 32<<12 | 31<<18 = 0x7e0fc1.
	got := pack6([]int8{1, -1, -32, 31})
	if want := []uint8{0xc1, 0x0f, 0x7e}; string(got) != string(want) {
		t.Fatalf("pack6 = % x, want % x", got, want)
	}
	for k, want := range []int32{1, -1, -32, 31} {
		if v := signExtend6(0x7e0fc1 >> (6 * k)); v != want {
			t.Errorf("value %d = %d, want %d", k, v, want)
		}
	}
}
