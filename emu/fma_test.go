package emu

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// doubleRoundingCases returns (a, b, c) with a*b+c within 2^-53 relative
// of a midpoint between two float32 values but not on it: float64
// rounding lands on the midpoint, so float32(math.FMA(a, b, c)) rounds
// the tie to even, which is wrong about half the time.
func doubleRoundingCases(r *rand.Rand, n int) [][3]float32 {
	var out [][3]float32
	for len(out) < n {
		c := randF32(r, -20, 20)
		e := math.Ilogb(float64(c)) - 24 // half an ulp of c
		j := 15 + r.Intn(9)              // a*b = ±2^e (1 - 2^-2j)
		a := float32(math.Ldexp(1+math.Ldexp(1, -j), e/2))
		b := float32(math.Ldexp(1-math.Ldexp(1, -j), e-e/2))
		if r.Intn(2) == 0 {
			b = -b
		}
		out = append(out, [3]float32{a, b, c})
	}
	return out
}

func TestFMAKernelRounding(t *testing.T) {
	m := loadTestdata(t, "fma.ptx")
	d := NewDevice(Options{})
	r := rand.New(rand.NewSource(9))
	cases := doubleRoundingCases(r, 500)
	cases = append(cases, doubleRoundFMA)
	for i := 0; i < 1500; i++ {
		a, b := randF32(r, -30, 30), randF32(r, -30, 30)
		pe := math.Ilogb(float64(a) * float64(b))
		cases = append(cases, [3]float32{a, b, randF32(r, pe-25, pe+25)})
	}
	// Subnormal inputs and results, and saturation.
	cases = append(cases, [3]float32{1e-20, 1e-20, 1e-39}, [3]float32{2, 3, -5.5}, [3]float32{0.5, 0.5, 0.25},
		[3]float32{float32(math.Inf(1)), 0, 1}, [3]float32{1, 1, float32(math.NaN())})
	n := len(cases)
	var A, B, C []float32
	for _, c := range cases {
		A, B, C = append(A, c[0]), append(B, c[1]), append(C, c[2])
	}
	pa, pb, pc := upload(t, d, f32bytes(A)), upload(t, d, f32bytes(B)), upload(t, d, f32bytes(C))
	pout, pout2 := upload(t, d, make([]byte, 16*n)), upload(t, d, make([]byte, 4*n))
	p := params{}.u64(pa).u64(pb).u64(pc).u64(pout).u64(pout2).u32(uint32(n))
	if err := d.Launch(m, "fma_modes", LaunchConfig{Grid: [3]int{(n + 127) / 128}, Block: [3]int{128}, Params: p}); err != nil {
		t.Fatal(err)
	}
	out := bytesF32(download(t, d, pout, 16*n))
	out2 := bytesF32(download(t, d, pout2, 4*n))
	naiveWrong := 0
	for i, c := range cases {
		a, b, cc := float64(c[0]), float64(c[1]), float64(c[2])
		for k, md := range modes {
			got := out[4*i+k]
			var want float32
			if math.IsNaN(a*b+cc) || math.IsInf(a*b+cc, 0) {
				want = float32(a*b + cc)
			} else {
				var ok bool
				if want, ok = refRound32(exactFMA(a, b, cc), md); !ok {
					continue
				}
			}
			if math.IsNaN(float64(want)) {
				if math.Float32bits(got) != canonNaN32 {
					t.Errorf("case %d: fma.%s NaN result %#x, want the canonical NaN", i, modeNames[md], math.Float32bits(got))
				}
				continue
			}
			if !same32(got, want) {
				t.Errorf("case %d: fma.%s(%g, %g, %g) = %g, want %g", i, modeNames[md], a, b, cc, got, want)
			}
			if md == rnRN && float32(math.FMA(a, b, cc)) != want {
				naiveWrong++
			}
		}
		// .sat clamps to [0, 1] with NaN -> 0; .ftz flushes subnormals.
		x := out[4*i]
		want := x
		switch {
		case x != x:
			want = 0
		case x < 0:
			want = 0
		case x > 1:
			want = 1
		case x < minNorm32:
			want = 0
		}
		if c[0] == 1e-20 { // inputs are normal, the result 1e-40 is subnormal: flushed
			want = 0
		}
		if math.Float32bits(out2[i]) != math.Float32bits(want) {
			t.Errorf("case %d: fma.rn.ftz.sat = %g, want %g", i, out2[i], want)
		}
	}
	if naiveWrong < 100 {
		t.Errorf("only %d cases where float32(math.FMA) double-rounds; the test should cover many", naiveWrong)
	}
	t.Logf("%d of %d cases would be wrong with float32(math.FMA)", naiveWrong, n)
	_ = big.NewFloat
}
