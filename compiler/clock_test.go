package compiler

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

// TestClock64: two gpu.Clock64 reads stay two %clock64 reads, and on the
// emulator (whose counter is the block's executed instructions) their
// difference counts the loop between them, as on a GPU it counts its
// cycles; the loop's result is stored.
func TestClock64(t *testing.T) {
	p := compileFile(t, filepath.Join("testdata", "clock.go"), Config{})
	if n := strings.Count(p.PTX, "%clock64"); n != 2 {
		t.Fatalf("%d reads of %%clock64 in the PTX, want 2", n)
	}
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	const n = 64
	dev := emu.NewDevice(emu.Options{})
	x, _ := dev.Alloc(4 * n)
	out, _ := dev.Alloc(8 * n)
	in := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(0.5))
	}
	if err := dev.Write(x, in); err != nil {
		t.Fatal(err)
	}
	params := make([]byte, 32)
	binary.LittleEndian.PutUint64(params[0:], x)
	binary.LittleEndian.PutUint64(params[8:], n)
	binary.LittleEndian.PutUint64(params[16:], out)
	binary.LittleEndian.PutUint64(params[24:], n)
	if err := dev.Launch(m, "Time", emu.LaunchConfig{Grid: [3]int{2, 1, 1}, Block: [3]int{32, 1, 1}, Params: params}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 8*n)
	if err := dev.Read(out, got); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		// The loop is 10 iterations of a compare, a branch, an FMA-shaped
		// pair and an increment: more than 30 instructions between reads.
		if d := int64(binary.LittleEndian.Uint64(got[8*i:])); d < 30 || d > 1000 {
			t.Fatalf("out[%d] = %d instructions between the reads, want 30 to 1000", i, d)
		}
	}
}
