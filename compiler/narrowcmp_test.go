package compiler

// Tests of narrowCompare (lower_expr.go): 64-bit comparisons of values the
// range analysis bounds to [0, 2^32) are 32-bit, others and loop tests
// stay 64-bit, and the narrowed ones decide as Go does on the emulator.

import (
	"encoding/binary"
	"testing"

	"github.com/gokern/kern/emu"
)

const narrowCmpSrc = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=64
func K(t gpu.Thread, out []int32, n int) {
	x := t.ThreadIdx().X
	r := int32(0)
	if t.Lane() == 0 { // narrowed: both in [0, 32)
		r |= 1
	}
	if x >= 40 { // narrowed: x in [0, 64)
		r |= 2
	}
	if x < n { // 64-bit: n is any int
		r |= 4
	}
	for k := 0; k < 3; k++ { // the loop's own test stays 64-bit
		r += 8
	}
	out[x] = r
}
`

func TestNarrowCompare(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(narrowCmpSrc))
	if err != nil {
		t.Fatal(err)
	}
	body := entryBody(t, p, "K")
	if got := countLines(body, `^setp\.(eq\.u32 %p\d+, %r\d+, 0|hs\.u32 %p\d+, %r\d+, 40);`); got != 2 {
		t.Errorf("%d 32-bit comparisons of the lane and the thread index, want 2:\n%s", got, body)
	}
	if got := countLines(body, `^setp\.\w+\.s64 `); got < 2 {
		t.Errorf("%d 64-bit comparisons, want x < n and the loop's test:\n%s", got, body)
	}
	dev := emu.NewDevice(emu.Options{})
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{-1, 0, 37, 1 << 40} {
		out, _ := dev.Alloc(4 * 64)
		params := make([]byte, 24)
		binary.LittleEndian.PutUint64(params[0:], out)
		binary.LittleEndian.PutUint64(params[8:], 64)
		binary.LittleEndian.PutUint64(params[16:], uint64(n))
		if err := dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{64, 1, 1}, Params: params}); err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, 4*64)
		if err := dev.Read(out, raw); err != nil {
			t.Fatal(err)
		}
		for x := range 64 {
			want := int32(24)
			if x%32 == 0 {
				want |= 1
			}
			if x >= 40 {
				want |= 2
			}
			if int64(x) < n {
				want |= 4
			}
			if got := int32(binary.LittleEndian.Uint32(raw[4*x:])); got != want {
				t.Errorf("n %d thread %d: %d, want %d", n, x, got, want)
			}
		}
	}
}
