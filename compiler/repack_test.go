package compiler

// Tests of the repack pass (compiler/ir/repack.go) on whole kernels: which
// packs of a split word become the word (golden file testdata/repack.go),
// and that every kernel there computes on the emulator, bit for bit, what
// its Go source computes.

import (
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gokern/kern/emu"
)

func init() {
	goldenChecks["repack"] = func(t *testing.T, p *Package) {
		body := func(k string) string { return entryBody(t, p, kernelOf(t, p, k).Entry) }
		for k, want := range map[string]int{"Pack": 0, "Copy": 0, "Shuffled": 3, "Rewritten": 1} {
			if n := countLines(body(k), `^mov\.b32 %r\d+, \{`); n != want {
				t.Errorf("%s: %d packs of two halves, want %d", k, n, want)
			}
		}
		// Nothing is left of the split where every pack became its word.
		for _, k := range []string{"Pack", "Copy"} {
			if n := countLines(body(k), `^(cvt\.u16\.u32|shr\.u32) `); n != 0 {
				t.Errorf("%s: %d instructions of the split left", k, n)
			}
		}
		if n := countLines(body("Copy"), `^st\.global\.v4\.u32 \[%rd\d+\], \{%r3, %r4, %r5, %r6\};$`); n != 1 {
			t.Errorf("Copy does not store the loaded words:\n%s", body("Copy"))
		}
	}
}

// TestRepackMatchesGo runs testdata/repack.go's kernels on the emulator
// over random bits and compares each output word with the kernel's Go
// source evaluated here.
func TestRepackMatchesGo(t *testing.T) {
	p := compileFile(t, filepath.Join("testdata", "repack.go"), Config{})
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	const threads = 64
	rng := rand.New(rand.NewPCG(8, 1))
	h := make([]uint16, 8*threads) // the 16-bit input of Pack, Copy and Shuffled
	for i := range h {
		h[i] = uint16(rng.Uint32())
	}
	words := make([]uint32, threads) // Rewritten's input
	for i := range words {
		words[i] = rng.Uint32()
	}
	pack := func(lo, hi uint16) uint32 { return uint32(lo) | uint32(hi)<<16 }
	for _, tc := range []struct {
		kernel  string
		in      []byte
		inSize  int // bytes per input element
		outLen  int // elements of the output
		outSize int // bytes per output element
		want    func(i int) uint32
	}{
		{"Pack", le16(h), 2, 4 * threads, 4, func(i int) uint32 { return pack(h[2*i], h[2*i+1]) }},
		{"Copy", le16(h), 2, 8 * threads, 2, func(i int) uint32 { return uint32(h[i]) }},
		{"Shuffled", le16(h), 2, 3 * threads, 4, func(i int) uint32 {
			v := h[8*(i/3):]
			return [3]uint32{pack(v[1], v[0]), pack(v[3], v[4]), pack(v[6], v[6])}[i%3]
		}},
		{"Rewritten", le32(words), 4, threads, 4, func(i int) uint32 {
			x := words[i]
			var lo, hi uint16
			for range 2 {
				lo = uint16(x)
				x = x*3 + 1
				hi = uint16(x >> 16)
			}
			return pack(lo, hi) ^ x
		}},
	} {
		dev := emu.NewDevice(emu.Options{})
		in, _ := dev.Alloc(len(tc.in))
		out, _ := dev.Alloc(tc.outLen * tc.outSize)
		if err := dev.Write(in, tc.in); err != nil {
			t.Fatal(err)
		}
		params := make([]byte, 32)
		binary.LittleEndian.PutUint64(params[0:], in)
		binary.LittleEndian.PutUint64(params[8:], uint64(len(tc.in)/tc.inSize))
		binary.LittleEndian.PutUint64(params[16:], out)
		binary.LittleEndian.PutUint64(params[24:], uint64(tc.outLen))
		if err := dev.Launch(m, tc.kernel, emu.LaunchConfig{Grid: [3]int{threads / 32, 1, 1}, Block: [3]int{32, 1, 1}, Params: params}); err != nil {
			t.Fatalf("%s: %v", tc.kernel, err)
		}
		got := make([]byte, tc.outLen*tc.outSize)
		if err := dev.Read(out, got); err != nil {
			t.Fatal(err)
		}
		bad := 0
		for i := range tc.outLen {
			var g uint32
			if tc.outSize == 2 {
				g = uint32(binary.LittleEndian.Uint16(got[2*i:]))
			} else {
				g = binary.LittleEndian.Uint32(got[4*i:])
			}
			if w := tc.want(i); g != w && bad < 5 {
				bad++
				t.Errorf("%s: out[%d] = %#x, want %#x", tc.kernel, i, g, w)
			}
		}
	}
}

// le16 and le32 are the little-endian bytes of s.
func le16(s []uint16) []byte {
	b := make([]byte, 2*len(s))
	for i, v := range s {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	return b
}

func le32(s []uint32) []byte {
	b := make([]byte, 4*len(s))
	for i, v := range s {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}
