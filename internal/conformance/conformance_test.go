package conformance

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/ptxas"
)

// devices are native mode, the emulator and, in -tags gpu builds, the GPU
// (gpuDevices).
func devices() []*kern.Device {
	return append([]*kern.Device{kern.OpenNative(), kern.OpenEmulator()}, gpuDevices()...)
}

// must unwraps a host-API result; a failure there is a broken test setup.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestPTXAssembles(t *testing.T) {
	ptx := SiluKernel.Kernel().Spec().Module.PTX
	for arch, rep := range ptxas.Check(t, "conformance", []byte(ptx), "sm_80", "sm_90") {
		for _, f := range rep.Entries() {
			if f.Spills() {
				t.Errorf("%s %s spills: %d bytes stored", arch, f.Name, f.SpillStores)
			}
		}
		if f := rep.Func("Transpose"); f != nil && f.SharedBytes != 32*33*4 {
			t.Errorf("%s: Transpose uses %d bytes of shared memory, want %d", arch, f.SharedBytes, 32*33*4)
		}
	}
}

func TestSilu(t *testing.T) {
	const n = 3001
	r := rand.New(rand.NewPCG(1, 1))
	xs := make([]float32, n)
	for i := range xs {
		// Magnitudes up to ~80: past 88, exp(-x) overflows float32 and
		// this formulation (not the device) loses the tiny result.
		xs[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(4)-2)))
	}
	for _, dev := range devices() {
		x := must(kern.Upload(dev, xs))
		out := must(kern.Alloc[float32](dev, n))
		if err := SiluKernel.Launch(dev, kern.Cover(n), x, out); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		got := must(out.Download())
		for i, y := range got {
			want := float64(xs[i]) / (1 + math.Exp(-float64(xs[i])))
			// gpu.Exp is within 2 ulp; one division and one add round once each.
			if d := math.Abs(float64(y) - want); d > 1e-37+6*math.Abs(want)*0x1p-24 {
				t.Fatalf("%s: silu(%g) = %g, want %g", dev.Kind(), xs[i], y, want)
			}
		}
	}
}

func TestTranspose(t *testing.T) {
	for _, shape := range [][2]int{{1, 1}, {33, 70}, {64, 32}, {5, 100}} {
		rows, cols := shape[0], shape[1]
		in := make([]float32, rows*cols)
		for i := range in {
			in[i] = float32(i)
		}
		for _, dev := range devices() {
			for _, name := range []string{"padded", "unpadded"} {
				a := must(kern.Upload(dev, in))
				b := must(kern.Alloc[float32](dev, rows*cols))
				grid := kern.Blocks(gpu.Dim3{X: (cols + 31) / 32, Y: (rows + 31) / 32}, gpu.Dim3{X: 32, Y: 8})
				var err error
				if name == "padded" {
					err = TransposeKernel.Launch(dev, grid, a, b, rows, cols)
				} else {
					err = TransposeNoPadKernel.Launch(dev, grid, a, b, rows, cols)
				}
				if err != nil {
					t.Fatalf("%s %s %dx%d: %v", dev.Kind(), name, rows, cols, err)
				}
				got := must(b.Download())
				for r := range rows {
					for c := range cols {
						if got[c*rows+r] != in[r*cols+c] {
							t.Fatalf("%s %s %dx%d: out[%d][%d] = %v, want %v", dev.Kind(), name, rows, cols, c, r, got[c*rows+r], in[r*cols+c])
						}
					}
				}
			}
		}
	}
}

func TestReductions(t *testing.T) {
	const n = 1000
	xs := make([]float32, n)
	is := make([]int32, n)
	for i := range xs {
		xs[i] = float32(i%13) - 6 // exact sums in any order
		is[i] = int32(i*7%101) - 50
	}
	for _, dev := range devices() {
		x := must(kern.Upload(dev, xs))
		out := must(kern.Alloc[float32](dev, 1))
		if err := SumBlocksKernel.Launch(dev, kern.Cover(n), x, out); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		want := float32(0)
		for _, v := range xs {
			want += v
		}
		if got := must(out.Download())[0]; got != want {
			t.Errorf("%s: SumBlocks = %v, want %v", dev.Kind(), got, want)
		}

		xi := must(kern.Upload(dev, is))
		blocks := (n + 127) / 128
		sums := must(kern.Alloc[int32](dev, blocks))
		if err := WarpShuffleSumKernel.Launch(dev, kern.Cover(n), xi, sums); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		got := must(sums.Download())
		for b := range blocks {
			w := int32(0)
			for i := b * 128; i < min(n, (b+1)*128); i++ {
				w += is[i]
			}
			if got[b] != w {
				t.Errorf("%s: WarpShuffleSum block %d = %d, want %d", dev.Kind(), b, got[b], w)
			}
		}
	}
}

func TestHistogram(t *testing.T) {
	const n = 10000
	r := rand.New(rand.NewPCG(3, 3))
	data := make([]uint8, n)
	var want [256]uint32
	for i := range data {
		data[i] = uint8(r.IntN(40) * r.IntN(7))
		want[data[i]]++
	}
	for _, dev := range devices() {
		d := must(kern.Upload(dev, data))
		h := must(kern.Alloc[uint32](dev, 256))
		if err := HistogramKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 8}, gpu.Dim3{X: 256}), d, h); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		got := must(h.Download())
		for b := range want {
			if got[b] != want[b] {
				t.Fatalf("%s: bin %d = %d, want %d", dev.Kind(), b, got[b], want[b])
			}
		}
	}
}

func TestUnpack6(t *testing.T) {
	for _, n := range []int{1, 4, 7, 1001} {
		vals := make([]int32, n)
		packed := make([]uint8, 3*((n+3)/4))
		for i := range vals {
			vals[i] = int32(i*37%64) - 32
			u := uint32(vals[i]) & 0x3f
			bit := 6 * i
			for k := 0; k < 6; k++ {
				if u>>k&1 == 1 {
					packed[(bit+k)/8] |= 1 << ((bit + k) % 8)
				}
			}
		}
		for _, dev := range devices() {
			p := must(kern.Upload(dev, packed))
			out := must(kern.Alloc[int32](dev, n))
			if err := Unpack6Kernel.Launch(dev, kern.Cover((n+3)/4), p, out); err != nil {
				t.Fatalf("%s n=%d: %v", dev.Kind(), n, err)
			}
			got := must(out.Download())
			for i := range vals {
				if got[i] != vals[i] {
					t.Fatalf("%s n=%d: out[%d] = %d, want %d", dev.Kind(), n, i, got[i], vals[i])
				}
			}
		}
	}
}

func TestSortNetwork(t *testing.T) {
	const groups = 100
	r := rand.New(rand.NewPCG(4, 4))
	xs := make([]float32, 8*groups)
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
	}
	for _, dev := range devices() {
		x := must(kern.Upload(dev, xs))
		m := must(kern.Alloc[float32](dev, groups))
		if err := SortNetworkKernel.Launch(dev, kern.Cover(groups), x, m); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		got := must(m.Download())
		for g := range groups {
			v := append([]float32(nil), xs[8*g:8*g+8]...)
			sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
			if want := (v[3] + v[4]) / 2; got[g] != want {
				t.Fatalf("%s: median %d = %v, want %v", dev.Kind(), g, got[g], want)
			}
		}
	}
}

func TestCollatz(t *testing.T) {
	starts := []uint64{0, 1, 2, 3, 6, 7, 27, 97, 871, 1 << 40, 63728127}
	ref := func(n uint64, limit int32) int32 {
		s := int32(0)
		for n > 1 {
			if s == limit {
				return -1
			}
			if n%2 == 0 {
				n /= 2
			} else {
				n = 3*n + 1
			}
			s++
		}
		return s
	}
	for _, dev := range devices() {
		st := must(kern.Upload(dev, starts))
		out := must(kern.Alloc[int32](dev, len(starts)))
		if err := CollatzKernel.Launch(dev, kern.Cover(len(starts)), st, out, 200); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		got := must(out.Download())
		for i, s := range starts {
			if want := ref(s, 200); got[i] != want {
				t.Errorf("%s: collatz(%d) = %d, want %d", dev.Kind(), s, got[i], want)
			}
		}
	}
}
