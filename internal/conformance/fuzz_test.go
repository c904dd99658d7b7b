package conformance

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// FuzzEmulatorMatchesNative runs kernels whose results are exact (no
// approximate math, no order-dependent float sums) on the emulator and in
// native mode with fuzzed inputs, and requires identical results: the
// emulator executes the compiled PTX, native mode the Go source, so any
// difference is a compiler or emulator bug.
func FuzzEmulatorMatchesNative(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, uint8(3), uint8(5))
	f.Add([]byte{0xff, 0x80, 0x7f, 0, 0x3f, 0xc0, 0x01, 0xfe}, uint8(1), uint8(1))
	f.Add(make([]byte, 200), uint8(17), uint8(9))
	native, emul := kern.OpenNative(), kern.OpenEmulator()
	f.Fuzz(func(t *testing.T, data []byte, rows, cols uint8) {
		if len(data) > 4096 {
			data = data[:4096]
		}
		fl := floats(data)
		compare(t, "Transpose", native, emul, func(dev *kern.Device) []float32 {
			r, c := int(rows%40)+1, int(cols%40)+1
			in := make([]float32, r*c)
			for i := range in {
				if len(fl) > 0 {
					in[i] = fl[i%len(fl)]
				}
			}
			a := must(kern.Upload(dev, in))
			b := must(kern.Alloc[float32](dev, r*c))
			grid := kern.Blocks(gpu.Dim3{X: (c + 31) / 32, Y: (r + 31) / 32}, gpu.Dim3{X: 32, Y: 8})
			if err := TransposeKernel.Launch(dev, grid, a, b, r, c); err != nil {
				t.Fatal(err)
			}
			return must(b.Download())
		})
		compare(t, "Unpack6", native, emul, func(dev *kern.Device) []int32 {
			n := len(data) / 3 * 4
			if n == 0 {
				return nil
			}
			p := must(kern.Upload(dev, data[:n/4*3]))
			out := must(kern.Alloc[int32](dev, n))
			if err := Unpack6Kernel.Launch(dev, kern.Cover(n/4), p, out); err != nil {
				t.Fatal(err)
			}
			return must(out.Download())
		})
		compare(t, "Histogram", native, emul, func(dev *kern.Device) []uint32 {
			d := must(kern.Upload(dev, append([]byte{0}, data...)))
			h := must(kern.Alloc[uint32](dev, 256))
			if err := HistogramKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 3}, gpu.Dim3{X: 256}), d, h); err != nil {
				t.Fatal(err)
			}
			return must(h.Download())
		})
		compare(t, "SortNetwork", native, emul, func(dev *kern.Device) []float32 {
			g := len(fl) / 8
			if g == 0 {
				return nil
			}
			x := must(kern.Upload(dev, fl[:8*g]))
			m := must(kern.Alloc[float32](dev, g))
			if err := SortNetworkKernel.Launch(dev, kern.Cover(g), x, m); err != nil {
				t.Fatal(err)
			}
			return must(m.Download())
		})
		compare(t, "Collatz", native, emul, func(dev *kern.Device) []int32 {
			starts := make([]uint64, len(data)/8)
			for i := range starts {
				starts[i] = binary.LittleEndian.Uint64(data[8*i:]) >> 20
			}
			if len(starts) == 0 {
				return nil
			}
			s := must(kern.Upload(dev, starts))
			out := must(kern.Alloc[int32](dev, len(starts)))
			if err := CollatzKernel.Launch(dev, kern.Cover(len(starts)), s, out, 500); err != nil {
				t.Fatal(err)
			}
			return must(out.Download())
		})
	})
}

// floats reads data as little-endian float32s, NaNs included.
func floats(data []byte) []float32 {
	out := make([]float32, len(data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out
}

// compare runs fn on both devices and requires bit-identical results.
func compare[T float32 | int32 | uint32](t *testing.T, name string, a, b *kern.Device, fn func(*kern.Device) []T) {
	t.Helper()
	x, y := fn(a), fn(b)
	if len(x) != len(y) {
		t.Fatalf("%s: %d results on %s, %d on %s", name, len(x), a.Kind(), len(y), b.Kind())
	}
	for i := range x {
		if bits(x[i]) != bits(y[i]) {
			t.Fatalf("%s: result %d is %v on %s and %v on %s", name, i, x[i], a.Kind(), y[i], b.Kind())
		}
	}
}

func bits[T float32 | int32 | uint32](v T) uint32 {
	switch x := any(v).(type) {
	case float32:
		return math.Float32bits(x)
	case int32:
		return uint32(x)
	}
	return uint32(any(v).(uint32))
}
