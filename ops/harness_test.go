package ops

// The test harness every op's test uses (llm.c's validate_result, in Go):
// the devices, random inputs across magnitudes, element conversions, and
// one comparison against a float64 reference with a tolerance of
// abs + ε·|ref|, plus ε'·scale where an op's error is relative to some
// other magnitude (a sum's terms, a rotation's inputs).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// testDevices are the devices every op runs on: the PTX emulator, which
// executes the generated PTX, and native mode, which runs the Go source.
var testDevices = []struct {
	name string
	dev  *kern.Device
}{
	{"emu", kern.OpenEmulator()},
	{"native", kern.OpenNative()},
}

// eachDevice runs f as a subtest on every test device.
func eachDevice(t *testing.T, f func(t *testing.T, dev *kern.Device)) {
	for _, d := range testDevices {
		t.Run(d.name, func(t *testing.T) { f(t, d.dev) })
	}
}

// eachType runs f as a subtest for every element type T the Float ops take.
func eachType(t *testing.T, f32, f16, bf16 func(t *testing.T)) {
	t.Run("f32", f32)
	t.Run("f16", f16)
	t.Run("bf16", bf16)
}

// unit is the unit roundoff of T: the largest relative error of one
// rounding to T.
func unit[T Float]() float64 {
	var z T
	switch any(z).(type) {
	case gpu.Half:
		return 0x1p-11
	case gpu.BFloat16:
		return 0x1p-8
	}
	return 0x1p-24
}

// tol is a tolerance: |got - want| ≤ abs + rel·|want| + srel·scale,
// where scale is a per-element magnitude the op supplies.
type tol struct{ abs, rel, srel float64 }

// outTol is the tolerance of a result computed in float32 with an error
// of k float32 units and then rounded to T (one more unit of T), with the
// absolute floor tiny[T].
func outTol[T Float](k float64) tol {
	rel := k * 0x1p-24
	if u := unit[T](); u > 0x1p-24 {
		rel += u
	}
	return tol{abs: tiny[T](), rel: rel}
}

// tiny is the absolute error allowed for results near zero: half the
// spacing of float16's subnormals, and for float32 and bfloat16 the
// smallest normal (a device may flush subnormal results to zero).
func tiny[T Float]() float64 {
	var z T
	if _, ok := any(z).(gpu.Half); ok {
		return 0x1p-25
	}
	return 0x1p-126
}

// compare checks got against the float64 reference want. scale is the
// per-element magnitude tl.srel applies to, or nil. It prints the first mismatches, stops after 10, and logs the
// largest error as a share of the allowed error.
func compare(t *testing.T, what string, got, want []float64, tl tol, scale []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d", what, len(got), len(want))
	}
	bad, worst, worstAt := 0, 0.0, -1
	var msgs []string
	for i := range want {
		g, w := got[i], want[i]
		if math.IsNaN(w) || math.IsInf(w, 0) {
			if !(math.IsNaN(w) && math.IsNaN(g)) && g != w {
				bad++
				msgs = append(msgs, fmt.Sprintf("  %s[%d] = %g, want %g", what, i, g, w))
			}
			continue
		}
		allowed := tl.abs + tl.rel*math.Abs(w)
		if scale != nil {
			allowed += tl.srel * scale[i]
		}
		e := math.Abs(g - w)
		if !(e <= allowed) {
			bad++
			if len(msgs) < 10 {
				msgs = append(msgs, fmt.Sprintf("  %s[%d] = %.9g, want %.9g (|err| %.3g > %.3g allowed)", what, i, g, w, e, allowed))
			}
		}
		share := 0.0
		if e > 0 {
			share = e / allowed // +Inf for an exact tolerance
		}
		if share > worst || worstAt < 0 {
			worst, worstAt = share, i
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements outside abs %.3g + rel %.3g·|ref| + %.3g·scale:\n%s", what, bad, len(want), tl.abs, tl.rel, tl.srel, strings.Join(msgs, "\n"))
		return
	}
	if testing.Verbose() && worstAt >= 0 {
		t.Logf("%s: %d elements ok, worst error %.0f%% of allowed at [%d]", what, len(want), 100*worst, worstAt)
	}
}

// randn returns n normal values times mag, with a tenth of them scaled by
// a further 10^±2 so that every row mixes magnitudes.
func randn(rng *rand.Rand, n int, mag float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		v := rng.NormFloat64() * mag
		if rng.IntN(10) == 0 {
			v *= math.Pow(10, float64(rng.IntN(5)-2))
		}
		xs[i] = v
	}
	return xs
}

// uniformVals returns n values uniform in [lo, hi).
func uniformVals(rng *rand.Rand, n int, lo, hi float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = lo + (hi-lo)*rng.Float64()
	}
	return xs
}

// round converts float64 values to T (via float32, round to nearest).
func round[T Float](xs []float64) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = fromF32[T](float32(x))
	}
	return out
}

func fromF32[T Float](v float32) T {
	var z T
	switch p := any(&z).(type) {
	case *gpu.Half:
		*p = gpu.ToHalf(v)
	case *gpu.BFloat16:
		*p = gpu.ToBFloat16(v)
	case *float32:
		*p = v
	}
	return z
}

// wide converts T values to float64 exactly.
func wide[T Float](xs []T) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		switch v := any(x).(type) {
		case gpu.Half:
			out[i] = float64(v.Float32())
		case gpu.BFloat16:
			out[i] = float64(v.Float32())
		case float32:
			out[i] = float64(v)
		}
	}
	return out
}

// upload rounds xs to T and uploads them; it returns the buffer and the
// rounded values as float64, the reference's input.
func upload[T Float](t testing.TB, dev *kern.Device, xs []float64) (*kern.Buffer[T], []float64) {
	t.Helper()
	r := round[T](xs)
	buf, err := kern.Upload(dev, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Free() })
	return buf, wide(r)
}

// alloc allocates n zeroed elements.
func alloc[T gpu.Elem](t testing.TB, dev *kern.Device, n int) *kern.Buffer[T] {
	t.Helper()
	buf, err := kern.Alloc[T](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Free() })
	return buf
}

// download returns the buffer as float64.
func download[T Float](t testing.TB, buf *kern.Buffer[T]) []float64 {
	t.Helper()
	xs, err := buf.Download()
	if err != nil {
		t.Fatal(err)
	}
	return wide(xs)
}

// wantErr checks that err is an error mentioning every one of subs.
func wantErr(t *testing.T, what string, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one mentioning %q", what, subs)
		return
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: error %q does not mention %q", what, err, s)
		}
	}
}
