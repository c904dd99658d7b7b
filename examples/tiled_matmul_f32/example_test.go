package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
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

// A shorter than m·k: the edge-tile load of A under `if r0+r < m && k0+tx
// < k` (one predicate since condmerge.go) still fails its bounds check,
// reported as a DeviceError at that access with the index and length Go
// would report, on the emulator and in native mode.
func TestMatMul32ShortA(t *testing.T) {
	const m, n, k = 5, 3, 40
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		a, err := kern.Alloc[float32](dev, m*k-1)
		if err != nil {
			t.Fatal(err)
		}
		b, err := kern.Alloc[float32](dev, k*n)
		if err != nil {
			t.Fatal(err)
		}
		c, err := kern.Alloc[float32](dev, m*n)
		if err != nil {
			t.Fatal(err)
		}
		err = MatMul32Kernel.Launch(dev, versions[1].grid(m, n), a, b, c, m, n, k)
		var de *kern.DeviceError
		if !errors.As(err, &de) {
			t.Fatalf("%s: err = %v, want a *kern.DeviceError", dev.Kind(), err)
		}
		if site := sourceLine(t, "av = a[(r0+r)*k+k0+tx]"); !strings.HasPrefix(de.Site, site+":") || de.Index != m*k-1 || de.Length != m*k-1 {
			t.Errorf("%s: %q at %s index %d length %d, want A's load (%s) at index %d, length %d",
				dev.Kind(), de.Message, de.Site, de.Index, de.Length, site, m*k-1, m*k-1)
		}
	}
}

// C shorter than m·n: the epilogue's store under `row < m && col < n`,
// whose check liftcheck.go lifts above the guard (the stored acc[i] is a
// register read), still fails at that store with Go's index and length.
func TestMatMul32ShortC(t *testing.T) {
	const m, n, k = 5, 3, 40
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		a, err := kern.Alloc[float32](dev, m*k)
		if err != nil {
			t.Fatal(err)
		}
		b, err := kern.Alloc[float32](dev, k*n)
		if err != nil {
			t.Fatal(err)
		}
		c, err := kern.Alloc[float32](dev, m*n-1)
		if err != nil {
			t.Fatal(err)
		}
		err = MatMul32Kernel.Launch(dev, versions[1].grid(m, n), a, b, c, m, n, k)
		var de *kern.DeviceError
		if !errors.As(err, &de) {
			t.Fatalf("%s: err = %v, want a *kern.DeviceError", dev.Kind(), err)
		}
		if site := sourceLine(t, "c[row*n+col] = acc[i]"); !strings.HasPrefix(de.Site, site+":") || de.Index != m*n-1 || de.Length != m*n-1 {
			t.Errorf("%s: %q at %s index %d length %d, want C's store (%s) at index %d, length %d",
				dev.Kind(), de.Message, de.Site, de.Index, de.Length, site, m*n-1, m*n-1)
		}
	}
}

// sourceLine returns "kernels.go:N" for the one line of kernels.go that
// holds text, so the fault tests name a statement rather than a number.
func sourceLine(t *testing.T, text string) string {
	t.Helper()
	src, err := os.ReadFile("kernels.go")
	if err != nil {
		t.Fatal(err)
	}
	site := ""
	for i, line := range strings.Split(string(src), "\n") {
		if strings.Contains(line, text) {
			if site != "" {
				t.Fatalf("kernels.go holds %q twice", text)
			}
			site = fmt.Sprintf("kernels.go:%d", i+1)
		}
	}
	if site == "" {
		t.Fatalf("kernels.go has no line holding %q", text)
	}
	return site
}
