package emu

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"
)

// runMMA runs one of mma.ptx's kernels on A (16xK), B (Kx8) and C (16x8),
// given as float64 (or integer) values already representable in the
// element type, and returns D.
func runMMA(t *testing.T, entry string, k int, elemBytes int, enc func(float64) uint64, a, b [][]float64, c [16][8]float64, cInt bool) [16][8]float64 {
	m := loadTestdata(t, "mma.ptx")
	d := NewDevice(Options{})
	A := make([]byte, 16*k*elemBytes)
	BT := make([]byte, 8*k*elemBytes)
	for i := 0; i < 16; i++ {
		for j := 0; j < k; j++ {
			storeLE(A[(i*k+j)*elemBytes:], elemBytes, enc(a[i][j]))
		}
	}
	for j := 0; j < k; j++ {
		for n := 0; n < 8; n++ {
			storeLE(BT[(n*k+j)*elemBytes:], elemBytes, enc(b[j][n])) // B column-major
		}
	}
	C := make([]byte, 16*8*4)
	for i := 0; i < 16; i++ {
		for n := 0; n < 8; n++ {
			v := uint32(math.Float32bits(float32(c[i][n])))
			if cInt {
				v = uint32(int32(c[i][n]))
			}
			binary.LittleEndian.PutUint32(C[(i*8+n)*4:], v)
		}
	}
	pa, pb, pc := upload(t, d, A), upload(t, d, BT), upload(t, d, C)
	pd := upload(t, d, make([]byte, len(C)))
	if err := d.Launch(m, entry, LaunchConfig{Grid: [3]int{1}, Block: [3]int{32}, Params: params{}.u64(pa).u64(pb).u64(pc).u64(pd)}); err != nil {
		t.Fatal(err)
	}
	D := download(t, d, pd, len(C))
	var out [16][8]float64
	for i := 0; i < 16; i++ {
		for n := 0; n < 8; n++ {
			v := binary.LittleEndian.Uint32(D[(i*8+n)*4:])
			if cInt {
				out[i][n] = float64(int32(v))
			} else {
				out[i][n] = float64(math.Float32frombits(v))
			}
		}
	}
	return out
}

// refMatmul is D = A*B + C in float64.
func refMatmul(a, b [][]float64, c [16][8]float64) [16][8]float64 {
	var d [16][8]float64
	for i := 0; i < 16; i++ {
		for n := 0; n < 8; n++ {
			s := c[i][n]
			for j := range b {
				s += a[i][j] * b[j][n]
			}
			d[i][n] = s
		}
	}
	return d
}

func randMatrix(r *rand.Rand, rows, cols int, gen func() float64) [][]float64 {
	m := make([][]float64, rows)
	for i := range m {
		m[i] = make([]float64, cols)
		for j := range m[i] {
			m[i][j] = gen()
		}
	}
	return m
}

func TestMMA(t *testing.T) {
	r := rand.New(rand.NewSource(10))
	// Small multiples of 1/4: products and sums are exact in f32, so the
	// result does not depend on the order of accumulation.
	quarter := func() float64 { return float64(r.Intn(33)-16) / 4 }
	var c [16][8]float64
	for i := range c {
		for n := range c[i] {
			c[i][n] = float64(r.Intn(200) - 100)
		}
	}
	f16enc := func(x float64) uint64 { return uint64(narrow(x, fmtF16, rnRN)) }
	bf16enc := func(x float64) uint64 { return uint64(narrow(x, fmtBF16, rnRN)) }
	s8enc := func(x float64) uint64 { return uint64(uint8(int8(x))) }
	for _, tc := range []struct {
		entry string
		k     int
		bytes int
		enc   func(float64) uint64
		gen   func() float64
		cInt  bool
	}{
		{"mma_f16", 16, 2, f16enc, quarter, false},
		{"mma_bf16", 16, 2, bf16enc, quarter, false},
		{"mma_s8", 32, 1, s8enc, func() float64 { return float64(r.Intn(256) - 128) }, true},
	} {
		t.Run(tc.entry, func(t *testing.T) {
			a := randMatrix(r, 16, tc.k, tc.gen)
			b := randMatrix(r, tc.k, 8, tc.gen)
			got := runMMA(t, tc.entry, tc.k, tc.bytes, tc.enc, a, b, c, tc.cInt)
			want := refMatmul(a, b, c)
			for i := 0; i < 16; i++ {
				for n := 0; n < 8; n++ {
					if got[i][n] != want[i][n] {
						t.Fatalf("D[%d][%d] = %v, want %v", i, n, got[i][n], want[i][n])
					}
				}
			}
		})
	}
}
