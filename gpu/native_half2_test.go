package gpu

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestFMA2Rounding checks native FMA2 lane by lane against the exact
// x*y+z (math/big) rounded to nearest even by brute force: of the
// 16-bit neighbours of the float64 approximation, the nearest, ties to
// the even encoding.
func TestFMA2Rounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, bf := range []bool{false, true} {
		bad := 0
		for range 100000 {
			x, y, z := uint16(rng.Uint32()), uint16(rng.Uint32()), uint16(rng.Uint32())
			if rng.IntN(2) == 0 { // products near z's magnitude: cancellation and ties
				z = x ^ 0x8000
				y = one16(bf) + uint16(rng.IntN(3))
			}
			X, Y, Z := widen16(x, bf), widen16(y, bf), widen16(z, bf)
			if math.IsNaN(X) || math.IsNaN(Y) || math.IsNaN(Z) || math.IsInf(X, 0) || math.IsInf(Y, 0) || math.IsInf(Z, 0) {
				continue
			}
			want := roundRef(X, Y, Z, bf)
			got := uint16(fma2(uint32(x), uint32(y), uint32(z), bf))
			if got != want && bad < 10 {
				bad++
				t.Errorf("bf16=%v fma(%#04x, %#04x, %#04x) = %#04x, want %#04x", bf, x, y, z, got, want)
			}
		}
	}
	// Specials: NaN in, NaN out (canonical); Inf·0 is NaN; Inf survives.
	for _, c := range []struct {
		x, y, z, want uint16
		bf            bool
	}{
		{0x7e01, 0x3c00, 0, 0x7fff, false},
		{0x7c00, 0, 0, 0x7fff, false},
		{0x7c00, 0x3c00, 0x3c00, 0x7c00, false},
		{0x7bff, 0x4000, 0, 0x7c00, false}, // 65504·2 overflows
		{0x8000, 0x3c00, 0x8000, 0x8000, false},
		{0x7f80, 0xbf80, 0x3f80, 0xff80, true},
		{0x7fc1, 0x3f80, 0, 0x7fff, true},
	} {
		if got := fma16(c.x, c.y, c.z, c.bf); got != c.want {
			t.Errorf("bf16=%v fma(%#04x, %#04x, %#04x) = %#04x, want %#04x", c.bf, c.x, c.y, c.z, got, c.want)
		}
	}
	if got := Mul2(Half2(0x80003c00), Half2(0x3c003c00)); got != 0x80003c00 {
		t.Errorf("Mul2(-0, 1) = %#08x, want -0 kept", uint32(got))
	}
	if got := Sub2(BFloat162(0x3f804000), BFloat162(0x3f803f80)); got != 0x00003f80 {
		t.Errorf("Sub2 bf16 (1-1, 2-1) = %#08x, want 0x00003f80", uint32(got))
	}
}

func one16(bf bool) uint16 { return uint16(one2(bf)) }

// roundRef rounds x*y+z (finite) to the 16-bit format by comparing exact
// distances to the candidate encodings around the float64 sum.
func roundRef(x, y, z float64, bf bool) uint16 {
	exact := new(big.Float).SetPrec(400).SetFloat64(x)
	exact.Mul(exact, new(big.Float).SetFloat64(y))
	exact.Add(exact, new(big.Float).SetPrec(400).SetFloat64(z))
	approx, _ := exact.Float64()
	c0 := narrow16(approx, bf)
	best, bestD := uint16(0), (*big.Float)(nil)
	for _, c := range []uint16{c0, next16(c0, 1), next16(c0, -1)} {
		v := widen16(c, bf)
		if math.IsInf(v, 0) || math.IsNaN(v) {
			continue
		}
		d := new(big.Float).SetPrec(400).Sub(exact, new(big.Float).SetFloat64(v))
		d.Abs(d)
		if bestD == nil || d.Cmp(bestD) < 0 || d.Cmp(bestD) == 0 && c&1 == 0 {
			best, bestD = c, d
		}
	}
	if bestD == nil || bf && best&0x7fff == 0x7f7f && c0&0x7fff == 0x7f80 || !bf && best&0x7fff == 0x7bff && c0&0x7fff == 0x7c00 {
		return c0 // overflow: the candidates past the largest finite are Inf
	}
	if best&0x7fff == 0 && exact.Signbit() {
		return 0x8000 // a negative result that rounds to zero keeps its sign
	}
	if best&0x7fff == 0 && exact.Sign() == 0 {
		return c0 // exact zero: IEEE's sign rules, as float64 applies them
	}
	return best
}

// next16 is the encoding one step up (d = 1) or down in magnitude order of
// the value's number line.
func next16(h uint16, d int) uint16 {
	if h&0x8000 != 0 {
		d = -d
	}
	if h&0x7fff == 0 && d < 0 {
		return h ^ 0x8000 | 1
	}
	return uint16(int(h) + d)
}
