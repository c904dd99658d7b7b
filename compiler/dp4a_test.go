package compiler

// gpu.Dp4a on the emulator (the dp4a.s32.s32 the compiler emits) against
// native mode's Go body and a dot product written out here, bit for bit.

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

func TestDp4aMatchesNative(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel
func K(t gpu.Thread, in, out []uint64) {
	for i := 0; i+2 < len(in) && i/3 < len(out); i += 3 {
		out[i/3] = uint64(uint32(gpu.Dp4a(uint32(in[i]), uint32(in[i+1]), int32(in[i+2]))))
	}
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.PTX, "dp4a.s32.s32") {
		t.Errorf("the PTX has no dp4a.s32.s32")
	}
	// Bytes at the int8 extremes (-128, 127, -1, 0) mixed with random
	// ones, and accumulators near the int32 limits, so that a wrong sign
	// extension or a saturating add shows.
	rng := rand.New(rand.NewPCG(3, 4))
	edge := []uint32{0x80, 0x7f, 0xff, 0x00, 0x01}
	word := func() uint32 {
		var w uint32
		for i := range 4 {
			b := rng.Uint32() & 0xff
			if rng.IntN(2) == 0 {
				b = edge[rng.IntN(len(edge))]
			}
			w |= b << (8 * i)
		}
		return w
	}
	accs := []uint32{0, 1, 0x7fffffff, 0x80000000, 0xffffffff}
	const n = 3 * 300
	in := make([]uint64, n)
	for i := 0; i < n; i += 3 {
		in[i], in[i+1] = uint64(word()), uint64(word())
		in[i+2] = uint64(rng.Uint32())
		if rng.IntN(2) == 0 {
			in[i+2] = uint64(accs[rng.IntN(len(accs))])
		}
	}
	got, err := runK(emu.NewDevice(emu.Options{}), p.PTX, in, n/3)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := 0; i < n; i += 3 {
		a, b, c := uint32(in[i]), uint32(in[i+1]), int32(uint32(in[i+2]))
		// The reference: the byte products in int64, wrapped to int32 once.
		ref := int64(c)
		for j := range 4 {
			ref += int64(int8(a>>(8*j))) * int64(int8(b>>(8*j)))
		}
		want := uint32(int32(ref))
		if nat := uint32(gpu.Dp4a(a, b, c)); nat != want && bad < 10 {
			bad++
			t.Errorf("native Dp4a(%#08x, %#08x, %d) = %#x, want %#x", a, b, c, nat, want)
		}
		if g := uint32(got[i/3]); g != want && bad < 10 {
			bad++
			t.Errorf("emu Dp4a(%#08x, %#08x, %d) = %#x, want %#x", a, b, c, g, want)
		}
	}
}
