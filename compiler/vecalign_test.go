package compiler

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

// The alignment check of a vector access is left out where align.go
// proves the address aligned, and kept, as a panic site, where it cannot.
func TestVectorAlignmentCheck(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=64
func K(t gpu.Thread, x, y []float32, off int) {
	i := 4 * t.GlobalX()
	gpu.Store4(y, i, gpu.Load4(x, i))     // proven: i is a multiple of 4
	gpu.Store4(y, i, gpu.Load4(x, i+off)) // kept: off is unknown
	s := x[2:]
	gpu.Store2(y, i, gpu.Load2(s, 2*i)) // proven: s starts 8 bytes in, Load2 needs 8
	gpu.Store4(y, i, gpu.Load4(s, i))   // kept: s starts 8 bytes in, Load4 needs 16
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var misaligned []string
	for _, s := range p.Kernels[0].Sites {
		if strings.Contains(s, "misaligned") {
			misaligned = append(misaligned, s)
		}
	}
	if len(misaligned) != 2 || !strings.HasPrefix(misaligned[0], "panic at k.go:9:") || !strings.HasPrefix(misaligned[1], "panic at k.go:12:") {
		t.Errorf("misaligned-access sites %q, want the Load4s of lines 9 and 12", misaligned)
	}
	if n := countLines(entryBody(t, p, p.Kernels[0].Entry), `^and\.b64 %rd\d+, %rd\d+, 15;`); n != 2 {
		t.Errorf("%d address tests, want 2", n)
	}
	if _, err := CompileSource(Config{}, "k.go", []byte(strings.Replace(src, "block=64", "block=64 nobounds", 1))); err != nil {
		t.Fatal(err)
	}
}

// gpu.Load8/Store8 move eight 16-bit elements as one 128-bit access; the
// emulator's copy is checked element by element.
func TestLoad8Store8(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=32
func K(t gpu.Thread, x, y []gpu.Half) {
	i := 8 * t.GlobalX()
	v := gpu.Load8(x, i)
	v[0], v[7] = v[7], v[0]
	gpu.Store8(y, i, v)
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	body := entryBody(t, p, p.Kernels[0].Entry)
	if countLines(body, `^ld\.global\.nc\.v4\.u32 `) != 1 || countLines(body, `^st\.global\.v4\.u32 `) != 1 || countLines(body, `^and\.b64 `) != 0 {
		t.Fatalf("want one ld.v4.u32, one st.v4.u32 and no alignment test:\n%s", body)
	}
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	dev := emu.NewDevice(emu.Options{})
	x, _ := dev.Alloc(2 * 16)
	y, _ := dev.Alloc(2 * 16)
	raw := make([]byte, 32)
	for i := range 16 {
		binary.LittleEndian.PutUint16(raw[2*i:], uint16(0x3c00+i))
	}
	if err := dev.Write(x, raw); err != nil {
		t.Fatal(err)
	}
	params := make([]byte, 32)
	binary.LittleEndian.PutUint64(params[0:], x)
	binary.LittleEndian.PutUint64(params[8:], 16)
	binary.LittleEndian.PutUint64(params[16:], y)
	binary.LittleEndian.PutUint64(params[24:], 16)
	if err := dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{2, 1, 1}, Params: params}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 32)
	if err := dev.Read(y, got); err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		want := i
		switch i % 8 {
		case 0:
			want = i + 7
		case 7:
			want = i - 7
		}
		if g := binary.LittleEndian.Uint16(got[2*i:]); g != uint16(0x3c00+want) {
			t.Errorf("y[%d] = %#x, want %#x", i, g, 0x3c00+want)
		}
	}
}
