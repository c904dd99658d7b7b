package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// quantShapes are [rows, cols] with a partial last group for both group
// sizes (130 = 128 + 2 for Int4, 68 = 64 + 4 for Q6), one row, and more
// than a block. Q6 skips 130, not a multiple of 4.
var quantShapes = []struct{ rows, cols int }{{1, 4}, {3, 68}, {2, 130}, {5, 256}, {7, 1000}}

func randScales(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(math.Pow(10, rng.Float64()*4-3)) // 1e-3 .. 10
	}
	return s
}

func randBytes(rng *rand.Rand, n int) []uint8 {
	b := make([]uint8, n)
	for i := range b {
		b[i] = uint8(rng.Uint32())
	}
	return b
}

func uploadT[E gpu.Elem](t testing.TB, dev *kern.Device, xs []E) *kern.Buffer[E] {
	t.Helper()
	buf, err := kern.Upload(dev, xs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Free() })
	return buf
}

func TestDequant(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testDequant[float32](t, dev) },
			func(t *testing.T) { testDequant[gpu.Half](t, dev) },
			func(t *testing.T) { testDequant[gpu.BFloat16](t, dev) })
	})
}

// testDequant decodes random bits of every format and compares with a
// decoder written from the layouts in quant.go's header. The values are
// exact until the float32 multiply and the rounding to T.
func testDequant[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(31, 32))
	tl := outTol[T](1)
	for _, sh := range quantShapes {
		rows, cols, n := sh.rows, sh.cols, sh.rows*sh.cols
		name := fmt.Sprintf("%dx%d", rows, cols)

		// int8, per tensor and per row
		w8 := make([]int8, n)
		for i := range w8 {
			w8[i] = int8(rng.Uint32())
		}
		w8[0] = -128
		scales := randScales(rng, rows)
		w8b, sb := uploadT(t, dev, w8), uploadT(t, dev, scales)
		outT, outR := alloc[T](t, dev, n), alloc[T](t, dev, n)
		if err := DequantInt8(dev, outT, w8b, scales[0], n); err != nil {
			t.Fatal(err)
		}
		if err := DequantInt8Rows(dev, outR, w8b, sb, rows, cols); err != nil {
			t.Fatal(err)
		}
		wantT, wantR := make([]float64, n), make([]float64, n)
		for i, v := range w8 {
			wantT[i] = float64(v) * float64(scales[0])
			wantR[i] = float64(v) * float64(scales[i/cols])
		}
		compare(t, name+" Int8", download(t, outT), wantT, tl, nil)
		compare(t, name+" Int8Rows", download(t, outR), wantR, tl, nil)

		// int4, group 128
		g4 := (cols + 127) / 128
		p4, s4 := randBytes(rng, n/2), randScales(rng, rows*g4)
		out4 := alloc[T](t, dev, n)
		if err := DequantInt4(dev, out4, uploadT(t, dev, p4), uploadT(t, dev, s4), rows, cols); err != nil {
			t.Fatal(err)
		}
		want4 := make([]float64, n)
		for r := range rows {
			for j := range cols {
				by := p4[(r*cols+j)/2]
				nib := int(by & 15)
				if j%2 == 1 {
					nib = int(by >> 4)
				}
				want4[r*cols+j] = float64(nib-8) * float64(s4[r*g4+j/128])
			}
		}
		compare(t, name+" Int4", download(t, out4), want4, tl, nil)

		// Q6, group 64
		if cols%4 != 0 {
			continue
		}
		g6 := (cols + 63) / 64
		p6, s6 := randBytes(rng, n/4*3), randScales(rng, rows*g6)
		out6 := alloc[T](t, dev, n)
		if err := DequantQ6(dev, out6, uploadT(t, dev, p6), uploadT(t, dev, s6), rows, cols); err != nil {
			t.Fatal(err)
		}
		want6 := make([]float64, n)
		for e := range n {
			u := e / 4 * 3
			word := int(p6[u]) | int(p6[u+1])<<8 | int(p6[u+2])<<16
			v := word >> (6 * (e % 4)) & 63
			want6[e] = float64(v-32) * float64(s6[e/cols*g6+e%cols/64])
		}
		compare(t, name+" Q6", download(t, out6), want6, tl, nil)
	}
}

// TestQuantizeRoundTrip quantizes random weights on the host, dequantizes
// them on the device, and checks |w - out| ≤ scale/2 for every format.
func TestQuantizeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	const rows, cols = 3, 260
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(rng.NormFloat64() * math.Pow(10, float64(i%3-1)))
	}
	want := make([]float64, len(w))
	for i, v := range w {
		want[i] = float64(v)
	}
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		q8, s8, err := QuantizeInt8Rows(w, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		p4, s4, err := QuantizeInt4(w, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		p6, s6, err := QuantizeQ6(w, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name   string
			scales []float32
			group  int
			run    func(out *kern.Buffer[float32]) error
		}{
			{"Int8Rows", s8, cols, func(out *kern.Buffer[float32]) error {
				return DequantInt8Rows(dev, out, uploadT(t, dev, q8), uploadT(t, dev, s8), rows, cols)
			}},
			{"Int4", s4, Int4Group, func(out *kern.Buffer[float32]) error {
				return DequantInt4(dev, out, uploadT(t, dev, p4), uploadT(t, dev, s4), rows, cols)
			}},
			{"Q6", s6, Q6Group, func(out *kern.Buffer[float32]) error {
				return DequantQ6(dev, out, uploadT(t, dev, p6), uploadT(t, dev, s6), rows, cols)
			}},
		} {
			out := alloc[float32](t, dev, len(w))
			if err := c.run(out); err != nil {
				t.Fatal(err)
			}
			groups := (cols + c.group - 1) / c.group
			scale := make([]float64, len(w))
			for e := range scale {
				scale[e] = float64(c.scales[e/cols*groups+e%cols/c.group])
			}
			compare(t, c.name+" round trip", download(t, out), want, tol{abs: 0, rel: 0x1p-22, srel: 0.5 + 0x1p-20}, scale)
		}
	})
}

func TestQuantShapeErrors(t *testing.T) {
	dev := kern.OpenNative()
	out := alloc[gpu.Half](t, dev, 12)
	w8, sc := alloc[int8](t, dev, 12), alloc[float32](t, dev, 3)
	p6, p4 := alloc[uint8](t, dev, 9), alloc[uint8](t, dev, 6)
	wantErr(t, "int8 n", DequantInt8(dev, out, w8, 1, 11), "ops.DequantInt8", "w has 12 elements, want n = 11")
	wantErr(t, "int8 scale", DequantInt8(dev, out, w8, float32(math.Inf(1)), 12), "ops.DequantInt8", "scale = +Inf")
	wantErr(t, "rows scales", DequantInt8Rows(dev, out, w8, sc, 4, 3), "ops.DequantInt8Rows", "scales has 3 elements, want rows = 4")
	wantErr(t, "int4 odd", DequantInt4(dev, alloc[gpu.Half](t, dev, 9), p4, sc, 3, 3), "ops.DequantInt4", "cols = 3, want a multiple of 2")
	wantErr(t, "int4 packed", DequantInt4(dev, out, p6, sc, 3, 4), "ops.DequantInt4", "packed has 9 elements, want rows×cols·1/2 = 6")
	wantErr(t, "q6 cols", DequantQ6(dev, out, p6, sc, 2, 6), "ops.DequantQ6", "cols = 6, want a multiple of 4")
	wantErr(t, "q6 scales", DequantQ6(dev, out, p6, alloc[float32](t, dev, 2), 3, 4), "ops.DequantQ6", "scales has 2 elements, want rows×ceil(cols/64) = 3")
	wantErr(t, "q6 packed", DequantQ6(dev, out, p4, sc, 3, 4), "ops.DequantQ6", "packed has 6 elements, want rows×cols·3/4 = 9")
	if _, _, err := QuantizeInt4(make([]float32, 10), 2, 5); err == nil {
		t.Error("QuantizeInt4 with odd cols: no error")
	}
	if _, _, err := QuantizeQ6(make([]float32, 10), 2, 4); err == nil {
		t.Error("QuantizeQ6 with a wrong length: no error")
	}
}
