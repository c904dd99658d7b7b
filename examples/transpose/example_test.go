package main

import (
	"testing"

	"github.com/gokern/kern"
)

func TestRun(t *testing.T) {
	// 70×45: partial tiles on both edges.
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		if err := run(dev, 70, 45, 64); err != nil {
			t.Errorf("%s: %v", dev.Kind(), err)
		}
	}
}

// TestProfile holds the numbers the example prints to what the bank and
// sector models predict.
func TestProfile(t *testing.T) {
	prof, err := profile(64)
	if err != nil {
		t.Fatal(err)
	}
	const load, store = 0, 1
	checks := []struct {
		name      string
		got, want float64
	}{
		{"TransposeTiled shared load wavefronts/request", prof["TransposeTiled"].wavefronts(load), 32},
		{"TransposeTiled shared store wavefronts/request", prof["TransposeTiled"].wavefronts(store), 1},
		{"TransposePadded shared load wavefronts/request", prof["TransposePadded"].wavefronts(load), 1},
		{"TransposePadded shared store wavefronts/request", prof["TransposePadded"].wavefronts(store), 1},
		{"TransposeNaive global load efficiency", prof["TransposeNaive"].efficiency(load), 1},
		{"TransposeNaive global store efficiency", prof["TransposeNaive"].efficiency(store), 4.0 / 32},
		{"TransposePadded global load efficiency", prof["TransposePadded"].efficiency(load), 1},
		{"TransposePadded global store efficiency", prof["TransposePadded"].efficiency(store), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
