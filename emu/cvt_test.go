package emu

import (
	"encoding/binary"
	"math"
	"math/big"
	"testing"
)

// sat32 is the reference float-to-int conversion: round, clamp to
// [lo, hi], NaN to 0.
func satInt(x float64, round func(float64) float64, lo, hi float64) int64 {
	if math.IsNaN(x) {
		return 0
	}
	return int64(min(max(round(x), lo), hi))
}

func TestCvtTable(t *testing.T) {
	m := loadTestdata(t, "cvt.ptx")
	d := NewDevice(Options{})
	xs := []float32{2.5, -2.5, 3.5, 0.49999997, -0.5, 1e10, -1e10, 255.5, 256, -129.5, 32767.5,
		65504, 65520, 1e-40, 3.3895314e38, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		1 + 0x1p-11, 1 + 3*0x1p-11, 1.00390625 + 0x1p-9, 0.75, -0.0, 123456.789}
	n := len(xs)
	ys := make([]float64, n)
	ks := make([]int32, n)
	yvals := []float64{1 + 0x1p-24, 1 + 0x1p-24 + 0x1p-50, -(1 + 0x1p-24), 3.4028235677973366e38, 1e39, 1e-46,
		math.NaN(), 2.5, -2.5, 9.2e18, -9.3e18, 0.1}
	kvals := []int32{127, 128, -128, -129, 70000, -1, 0, 16777217, -16777219, 1 << 30}
	for i := range ys {
		ys[i] = yvals[i%len(yvals)]
		ks[i] = kvals[i%len(kvals)]
	}
	yb := make([]byte, 8*n)
	for i, y := range ys {
		binary.LittleEndian.PutUint64(yb[8*i:], math.Float64bits(y))
	}
	px, py := upload(t, d, f32bytes(xs)), upload(t, d, yb)
	pk := upload(t, d, u32bytes(func() []uint32 {
		u := make([]uint32, n)
		for i, k := range ks {
			u[i] = uint32(k)
		}
		return u
	}()))
	pout := upload(t, d, make([]byte, 96*n))
	p := params{}.u64(px).u64(py).u64(pk).u64(pout).u32(uint32(n))
	if err := d.Launch(m, "cvt_table", LaunchConfig{Grid: [3]int{1}, Block: [3]int{n}, Params: p}); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 96*n))
	f32b := func(f float32) uint32 { return math.Float32bits(f) }
	for i := 0; i < n; i++ {
		x, y, k := float64(xs[i]), ys[i], int64(ks[i])
		w := out[24*i : 24*i+24]
		want := make([]uint32, 24)
		const i32lo, i32hi = -2147483648, 2147483647
		want[0] = uint32(satInt(x, math.RoundToEven, i32lo, i32hi))
		want[1] = uint32(satInt(x, math.Trunc, i32lo, i32hi))
		want[2] = uint32(satInt(x, math.Floor, i32lo, i32hi))
		want[3] = uint32(satInt(x, math.Ceil, i32lo, i32hi))
		want[4] = uint32(satInt(x, math.Trunc, 0, math.MaxUint32))
		want[5] = uint32(satInt(x, math.RoundToEven, 0, 255))
		want[6] = uint32(int32(satInt(x, math.RoundToEven, -32768, 32767)))
		half := func(man, bias int, md rmode, qnan uint32) uint32 {
			if x != x {
				return qnan
			}
			if math.IsInf(x, 0) {
				return uint32(narrow(x, ffmt{exp: 16 - man - 1, man: man}, md))
			}
			v, _ := refRound(new(big.Float).SetFloat64(x), man, bias, md)
			return narrow(v, ffmt{exp: 16 - man - 1, man: man, qnan: qnan}, rnRZ) // v is representable
		}
		want[7] = half(10, 15, rnRN, 0x7fff)
		want[8] = half(10, 15, rnRZ, 0x7fff)
		want[9] = half(7, 127, rnRN, 0x7fff)
		want[10] = half(7, 127, rnRM, 0x7fff)
		for j, md := range modes {
			var r float32
			if y != y {
				r = float32(math.NaN())
			} else {
				var ok bool
				if r, ok = refRound32(new(big.Float).SetFloat64(y), md); !ok {
					// Below half the smallest subnormal: 0, or the smallest
					// subnormal when rounding away from zero.
					r = float32(math.Copysign(0, y))
					if md == rnRP && y > 0 || md == rnRM && y < 0 {
						r = float32(math.Copysign(0x1p-149, y))
					}
				}
			}
			want[11+j] = f32b(r)
			if y != y {
				want[11+j] = canonNaN32
			}
		}
		s64 := uint64(satInt(y, math.RoundToEven, math.MinInt64, math.MaxInt64))
		if y >= 0x1p63 {
			s64 = math.MaxInt64
		}
		want[15], want[16] = uint32(s64), uint32(s64>>32)
		want[17] = uint32(min(max(k, -128), 127))
		want[18] = uint32(uint16(k))
		want[19] = uint32(max(k, 0))
		rz, _ := refRound32(new(big.Float).SetInt64(k), rnRZ)
		want[20] = f32b(rz)
		want[21] = f32b(float32(widen(want[7], fmtF16)))
		if x != x {
			want[21] = canonNaN32
		}
		want[22] = f32b(float32(math.Trunc(x)))
		want[23] = f32b(float32(min(max(x, 0), 1)))
		if x != x {
			want[22], want[23] = canonNaN32, 0
		}
		names := []string{"rni.s32", "rzi.s32", "rmi.s32", "rpi.s32", "rzi.u32", "rni.u8", "rni.s16",
			"rn.f16", "rz.f16", "rn.bf16", "rm.bf16", "rn.f32.f64", "rz.f32.f64", "rm.f32.f64", "rp.f32.f64",
			"rni.s64 lo", "rni.s64 hi", "sat.s8.s32", "u16.s32", "sat.u32.s32", "rz.f32.s32", "f32.f16",
			"rzi.f32.f32", "sat.f32.f32"}
		for j := range want {
			if w[j] != want[j] {
				t.Errorf("x=%g y=%g k=%d: cvt.%s = %#x, want %#x", x, y, k, names[j], w[j], want[j])
			}
		}
	}
}
