package compiler

// The packed 16-bit arithmetic (gpu.FMA2, Add2, Sub2, Mul2) and gpu.Prmt
// on the emulator against native mode, bit for bit: the emulator runs the
// PTX the compiler emits (fma.rn.f16x2, fma.rn.bf16x2, ...), native mode
// the Go bodies in package gpu.

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

func TestPackedHalfMatchesNative(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel
func K(t gpu.Thread, in, out []uint64) {
	for i := 0; i+2 < len(in) && 6*(i/3)+5 < len(out); i += 3 {
		a, b, c := uint32(in[i]), uint32(in[i+1]), uint32(in[i+2])
		o := 6 * (i / 3)
		h := gpu.FMA2(gpu.Half2(a), gpu.Half2(b), gpu.Half2(c))
		f := gpu.FMA2(gpu.BFloat162(a), gpu.BFloat162(b), gpu.BFloat162(c))
		out[o] = uint64(h) | uint64(f)<<32
		out[o+1] = uint64(gpu.Mul2(gpu.Half2(a), gpu.Half2(b))) | uint64(gpu.Mul2(gpu.BFloat162(a), gpu.BFloat162(b)))<<32
		out[o+2] = uint64(gpu.Add2(gpu.Half2(a), gpu.Half2(c))) | uint64(gpu.Add2(gpu.BFloat162(a), gpu.BFloat162(c)))<<32
		out[o+3] = uint64(gpu.Sub2(gpu.Half2(b), gpu.Half2(c))) | uint64(gpu.Sub2(gpu.BFloat162(b), gpu.BFloat162(c)))<<32
		out[o+4] = uint64(gpu.Prmt(a, b, c))
		out[o+5] = uint64(gpu.Prmt(a, b, 0x3276))
	}
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{"fma.rn.f16x2", "mul.rn.f16x2", "add.rn.f16x2", "sub.rn.f16x2", "fma.rn.bf16x2", "prmt.b32"} {
		if !strings.Contains(p.PTX, form) {
			t.Errorf("the PTX has no %s", form)
		}
	}
	// Special lanes (zeros, subnormals, the largest finite, infinities, NaN,
	// values whose sums round to a tie) mixed with random bits.
	special := []uint16{0, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00,
		0x3c00, 0xbc00, 0x3c01, 0x1400, 0x7f7f, 0xff7f, 0x7f80, 0x3f80, 0x0080, 0x007f, 0x6400, 0xe408}
	rng := rand.New(rand.NewPCG(1, 2))
	lane := func() uint32 {
		if rng.IntN(3) == 0 {
			return uint32(special[rng.IntN(len(special))])
		}
		return uint32(rng.Uint32() & 0xffff)
	}
	const n = 3 * 400
	in := make([]uint64, n)
	for i := range in {
		in[i] = uint64(lane() | lane()<<16)
	}
	got, err := runK(emu.NewDevice(emu.Options{}), p.PTX, in, 6*n/3)
	if err != nil {
		t.Fatal(err)
	}
	bad, zero := 0, 0
	for i := 0; i < n; i += 3 {
		a, b, c := uint32(in[i]), uint32(in[i+1]), uint32(in[i+2])
		want := []uint64{
			uint64(gpu.FMA2(gpu.Half2(a), gpu.Half2(b), gpu.Half2(c))) | uint64(gpu.FMA2(gpu.BFloat162(a), gpu.BFloat162(b), gpu.BFloat162(c)))<<32,
			uint64(gpu.Mul2(gpu.Half2(a), gpu.Half2(b))) | uint64(gpu.Mul2(gpu.BFloat162(a), gpu.BFloat162(b)))<<32,
			uint64(gpu.Add2(gpu.Half2(a), gpu.Half2(c))) | uint64(gpu.Add2(gpu.BFloat162(a), gpu.BFloat162(c)))<<32,
			uint64(gpu.Sub2(gpu.Half2(b), gpu.Half2(c))) | uint64(gpu.Sub2(gpu.BFloat162(b), gpu.BFloat162(c)))<<32,
			uint64(gpu.Prmt(a, b, c)),
			uint64(gpu.Prmt(a, b, 0x3276)),
		}
		for j, w := range want {
			if w == 0 {
				zero++
			}
			if g := got[6*(i/3)+j]; g != w && bad < 10 {
				bad++
				t.Errorf("%s of %#08x, %#08x, %#08x: emu %#x, native %#x", []string{"FMA2", "Mul2", "Add2", "Sub2", "Prmt", "Prmt 0x3276"}[j], a, b, c, g, w)
			}
		}
	}
	if zero > n {
		t.Errorf("%d of %d results are zero: the inputs do not exercise the arithmetic", zero, 2*n)
	}
}
