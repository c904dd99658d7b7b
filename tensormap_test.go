package kern_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// TestTensorMapEmuNative builds a map of a 100×150 f16 matrix (row stride
// 152) on the emulator and in native mode, reads it back and decodes it,
// and checks the cache and the errors for shapes the hardware refuses.
func TestTensorMapEmuNative(t *testing.T) {
	for _, dev := range []*kern.Device{kern.OpenEmulator(), kern.OpenNative()} {
		t.Run(dev.Kind(), func(t *testing.T) {
			defer dev.Close()
			buf, err := kern.Alloc[gpu.Half](dev, 100*152)
			if err != nil {
				t.Fatal(err)
			}
			spec := kern.TensorMapSpec{Dims: [2]int{150, 100}, RowStride: 152, Box: [2]int{64, 32}, Swizzle: gpu.Swizzle128B}
			m, err := dev.TensorMap(buf, spec)
			if err != nil {
				t.Fatal(err)
			}
			words := downloadMap(t, m)
			tm, err := gpu.DecodeTensorMap(words)
			if err != nil {
				t.Fatal(err)
			}
			want := gpu.TensorMap2D{Base: tm.Base, ElemBytes: 2, Dims: [2]int{150, 100}, RowBytes: 304, Box: [2]int{64, 32}, Swizzle: gpu.Swizzle128B}
			if tm != want || tm.Base == 0 {
				t.Errorf("map %+v, want %+v", tm, want)
			}
			if again, err := dev.TensorMap(buf, spec); err != nil || !slices.Equal(downloadMap(t, again), words) {
				t.Errorf("the same view again: %v", err)
			}
			if m.Spec() != spec {
				t.Errorf("Spec() = %+v", m.Spec())
			}
			checkTensorMapErrors(t, dev, buf)
		})
	}
}

func downloadMap(t *testing.T, m *kern.TensorMap) []uint64 {
	t.Helper()
	w, err := m.Words()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// checkTensorMapErrors asks for views the hardware or the buffer refuses.
func checkTensorMapErrors(t *testing.T, dev *kern.Device, buf *kern.Buffer[gpu.Half]) {
	t.Helper()
	for _, c := range []struct {
		spec kern.TensorMapSpec
		want string
	}{
		{kern.TensorMapSpec{Dims: [2]int{150, 100}, Box: [2]int{64, 32}}, "row stride 300 bytes is not a multiple of 16"},
		{kern.TensorMapSpec{Dims: [2]int{152, 100}, Box: [2]int{64, 300}}, "box [64 300] is not in 1..256"},
		{kern.TensorMapSpec{Dims: [2]int{152, 100}, Box: [2]int{4, 32}}, "box row of 8 bytes is not a multiple of 16"},
		{kern.TensorMapSpec{Dims: [2]int{152, 100}, Box: [2]int{128, 32}, Swizzle: gpu.Swizzle128B}, "wider than the 128-byte swizzle"},
		{kern.TensorMapSpec{Dims: [2]int{152, 101}, Box: [2]int{64, 32}}, "need 15352 elements"},
		{kern.TensorMapSpec{Dims: [2]int{0, 100}, Box: [2]int{64, 32}}, "want positive dims"},
	} {
		if _, err := dev.TensorMap(buf, c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error containing %q", c.spec, err, c.want)
		}
	}
	if _, err := dev.TensorMap(kern.ScalarArg(3), kern.TensorMapSpec{}); err == nil || !strings.Contains(err.Error(), "scalar") {
		t.Errorf("a scalar: %v", err)
	}
	other := kern.OpenEmulator()
	defer other.Close()
	if _, err := other.TensorMap(buf, kern.TensorMapSpec{Dims: [2]int{152, 100}, Box: [2]int{64, 32}}); err == nil || !strings.Contains(err.Error(), "another device") {
		t.Errorf("a buffer of another device: %v", err)
	}
}

// TestTensorMapStubDriver builds a map through cuTensorMapEncodeTiled on
// the stub libcuda, which records its arguments in the map, and checks
// that the driver's refusal comes back as an error.
func TestTensorMapStubDriver(t *testing.T) {
	dev := openStubCUDA(t)
	defer dev.Close()
	buf, err := kern.Alloc[gpu.BFloat16](dev, 100*152)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dev.TensorMap(buf, kern.TensorMapSpec{Dims: [2]int{150, 100}, RowStride: 152, Box: [2]int{64, 32}, Swizzle: gpu.Swizzle128B})
	if err != nil {
		t.Fatal(err)
	}
	w := downloadMap(t, m)
	const stubMagic = 0x5455425354414d54
	const bf16, rank, sw128 = 9, 2, 3
	if w[0] != stubMagic || w[2] != bf16|rank<<8|sw128<<16 || w[3] != 150 || w[4] != 100 || w[5] != 304 || w[6] != 64|32<<32 {
		t.Errorf("stub map %#x", w[:7])
	}
	_, err = dev.TensorMap(buf, kern.TensorMapSpec{Dims: [2]int{150, 100}, RowStride: 152, Box: [2]int{64, 300}})
	if err == nil || !strings.Contains(err.Error(), "cuTensorMapEncodeTiled") {
		t.Errorf("a 300-row box: %v, want the driver's refusal", err)
	}
}
