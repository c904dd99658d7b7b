package gpu_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gokern/kern/gpu"
)

// sink makes the test's slices escape: heap allocations of 16 bytes or
// more are 16-byte aligned, as native-mode buffers are; a stack slot need
// not be.
var sink []any

// Native mode's vector accesses: the elements in order, bounds checked as
// s[i] … s[i+n-1] are, and an address not a multiple of the width is the
// panic the device check reports (compiler/vecalign.go has the same text).
func TestNativeVectorAccesses(t *testing.T) {
	h := make([]gpu.Half, 24)
	sink = append(sink, h)
	for i := range h {
		h[i] = gpu.Half(0x3c00 + i)
	}
	v := gpu.Load8(h, 8)
	if fmt.Sprint(v) != fmt.Sprint(h[8:16]) {
		t.Errorf("Load8 = %v, want %v", v, h[8:16])
	}
	v[0], v[7] = v[7], v[0]
	gpu.Store8(h, 16, v)
	if h[16] != h[15] || h[23] != h[8] || h[17] != h[9] {
		t.Errorf("Store8 wrote %v", h[16:])
	}
	panics := func(f func()) (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		f()
		return ""
	}
	f := make([]float32, 8)
	sink = append(sink, f)
	if m := panics(func() { gpu.Load4(f, 1) }); !strings.HasPrefix(m, "gpu.Load4: misaligned access: the address of s[i] must be a multiple of 16 bytes") {
		t.Errorf("Load4 at 1: %q", m)
	}
	if m := panics(func() { gpu.Store8(h, 4, v) }); !strings.HasPrefix(m, "gpu.Store8: misaligned access: the address of s[i] must be a multiple of 16 bytes") {
		t.Errorf("Store8 at 4: %q", m)
	}
	if m := panics(func() { gpu.Load4(f, 6) }); !strings.Contains(m, "index out of range [8]") {
		t.Errorf("Load4 past the end: %q, want the bounds panic first", m)
	}
	if m := panics(func() { gpu.Store2(f[1:], 0, [2]float32{}) }); !strings.Contains(m, "multiple of 8 bytes") {
		t.Errorf("Store2 on a re-slice at an odd offset: %q", m)
	}
}
