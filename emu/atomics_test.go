package emu

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"
)

func TestHistogram(t *testing.T) {
	m := loadTestdata(t, "atomics.ptx")
	d := NewDevice(Options{Workers: 4})
	const n = 10000
	in := make([]uint32, n)
	var want [16]uint32
	r := rand.New(rand.NewSource(3))
	for i := range in {
		in[i] = uint32(r.Intn(1 << 20))
		want[in[i]&15]++
	}
	pin := upload(t, d, u32bytes(in))
	h1 := upload(t, d, make([]byte, 64))
	h2 := upload(t, d, make([]byte, 64))
	p := params{}.u64(pin).u32(n).u64(h1).u64(h2)
	if err := d.Launch(m, "histogram", LaunchConfig{Grid: [3]int{(n + 127) / 128}, Block: [3]int{128}, Params: p}); err != nil {
		t.Fatal(err)
	}
	g1 := bytesU32(download(t, d, h1, 64))
	g2 := bytesU32(download(t, d, h2, 64))
	for b := range want {
		if g1[b] != want[b] || g2[b] != want[b] {
			t.Errorf("bin %d: global %d, via shared %d, want %d", b, g1[b], g2[b], want[b])
		}
	}
}

func TestAtomicOps(t *testing.T) {
	m := loadTestdata(t, "atomics.ptx")
	d := NewDevice(Options{})
	mem := make([]byte, 48)
	le := binary.LittleEndian
	le.PutUint32(mem[4:], 1)
	le.PutUint32(mem[8:], 5)
	le.PutUint32(mem[12:], 11)
	le.PutUint32(mem[16:], uint32(0xfffffffb)) // -5
	le.PutUint32(mem[20:], 7)
	le.PutUint32(mem[24:], 0xff00)
	le.PutUint32(mem[28:], math.Float32bits(1.5))
	le.PutUint64(mem[32:], 1<<40)
	le.PutUint64(mem[40:], uint64(0xfffffffffffffff6)) // -10
	pm := upload(t, d, mem)
	pout := upload(t, d, make([]byte, 88))
	if err := d.Launch(m, "atom_ops", LaunchConfig{Grid: [3]int{1}, Block: [3]int{1}, Params: params{}.u64(pm).u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := download(t, d, pout, 88)
	got := bytesU32(out[:64])
	want := []uint32{
		0, 1, 2, 3, 0, // inc: wraps to 0 when old >= 3
		1, 0, 3, // dec: old 0 becomes the bound
		5, 9, // cas: the second compare fails
		11,         // exch
		0xfffffffb, // min.s32(-5, -9) returns old -5
		7,          // max.u32
		0xff00, 0xf000, 0xf001,
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("old value %d = %#x, want %#x", i, got[i], w)
		}
	}
	if f := math.Float32frombits(le.Uint32(out[64:])); f != 1.5 {
		t.Errorf("atom.add.f32 returned %v, want 1.5", f)
	}
	if v := le.Uint64(out[72:]); v != 1<<40 {
		t.Errorf("atom.add.u64 returned %#x", v)
	}
	if v := int64(le.Uint64(out[80:])); v != -10 {
		t.Errorf("atom.max.s64 returned %d, want -10", v)
	}
	final := download(t, d, pm, 48)
	checks := []struct {
		off  int
		want uint64
		size int
	}{
		{0, 1, 4}, {4, 2, 4}, {8, 9, 4}, {12, 12, 4}, {16, uint64(uint32(0xfffffff7)), 4}, {20, 0xffffffff, 4},
		{24, 0xf001 ^ 0xffff, 4}, {28, uint64(math.Float32bits(3.75)), 4}, {32, 1<<40 + 5, 8}, {40, uint64(0xfffffffffffffffe), 8},
	}
	for _, c := range checks {
		if got := loadLE(final[c.off:], c.size); got != c.want {
			t.Errorf("memory at %d = %#x, want %#x", c.off, got, c.want)
		}
	}
}
