package kern_test

import (
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// TestTensorMap2DOf makes a map of an emulator buffer (kern's layout: the
// shape comes back as given, the base inside the device's memory) and
// refuses one that does not fit the buffer or breaks the hardware's rules.
func TestTensorMap2DOf(t *testing.T) {
	dev := kern.OpenEmulator()
	defer dev.Close()
	b, err := kern.Alloc[gpu.Half](dev, 100*64)
	if err != nil {
		t.Fatal(err)
	}
	m := gpu.TensorMap2D{ElemBytes: 2, Dims: [2]int{64, 100}, RowBytes: 128, Box: [2]int{64, 32}, Swizzle: gpu.Swizzle128B}
	tm, err := kern.TensorMap2DOf(b, m)
	if err != nil {
		t.Fatal(err)
	}
	words, err := tm.Download()
	if err != nil {
		t.Fatal(err)
	}
	got, err := gpu.DecodeTensorMap(words)
	if err != nil {
		t.Fatal(err)
	}
	if got.Base == 0 || got.Dims != m.Dims || got.Box != m.Box || got.RowBytes != 128 || got.Swizzle != gpu.Swizzle128B {
		t.Fatalf("decoded %+v from %+v", got, m)
	}
	for name, c := range map[string]struct {
		m    gpu.TensorMap2D
		want string
	}{
		"past the end": {gpu.TensorMap2D{ElemBytes: 2, Dims: [2]int{64, 101}, RowBytes: 128, Box: [2]int{64, 32}}, "does not fit"},
		"element size": {gpu.TensorMap2D{ElemBytes: 4, Dims: [2]int{32, 10}, RowBytes: 128, Box: [2]int{32, 32}}, "ElemBytes"},
		"box too wide": {gpu.TensorMap2D{ElemBytes: 2, Dims: [2]int{64, 10}, RowBytes: 128, Box: [2]int{128, 8}, Swizzle: gpu.Swizzle128B}, "wider than"},
	} {
		if _, err := kern.TensorMap2DOf(b, c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
}
