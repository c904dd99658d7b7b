package compiler

// Tests of pack2.go and align.go: which PackHalf2 pairs become one 32-bit
// load (golden file testdata/pack2.go), and that a merged pair computes
// and fails exactly as Go's two indexings do, run on the emulator.

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/gokern/kern/emu"
)

func init() {
	goldenChecks["pack2"] = func(t *testing.T, p *Package) {
		body := func(k string) string { return entryBody(t, p, kernelOf(t, p, k).Entry) }
		for k, want := range map[string]int{"Even": 2, "Guarded": 2, "Odd": 0, "Swapped": 0} {
			if n := countLines(body(k), `^ld\.global\.nc\.u32 `); n != want {
				t.Errorf("%s: %d 32-bit loads, want %d", k, n, want)
			}
		}
		for k, want := range map[string]int{"Even": 0, "Guarded": 0, "Odd": 6, "Swapped": 2} {
			if n := countLines(body(k), `^ld\.global\.nc\.u16 `); n != want {
				t.Errorf("%s: %d 16-bit loads, want %d", k, n, want)
			}
		}
		// A merged pair is checked once (its s[i+1]); both sites stay
		// reportable. Even: two pairs and out[...].
		if n := countLines(body("Even"), `^setp\.hs\.u64 `); n != 3 {
			t.Errorf("Even: %d bounds checks, want 3", n)
		}
		if n := len(kernelOf(t, p, "Even").Sites); n != 5 {
			t.Errorf("Even: %d check sites, want 5", n)
		}
	}
}

const pack2Kernel = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=32
func K(t gpu.Thread, a []gpu.Half, out []uint32, off int) {
	i := 2*off + 2*t.GlobalX()
	out[t.GlobalX()] = gpu.PackHalf2(a[i], a[i+1])
}
`

// TestPack2MatchesGo runs the merged pair at lengths and offsets that put
// either element, or both, out of range (also below 0), one thread at a
// time so that the failing thread is known, and compares the word and the
// failure report with what Go's a[i], a[i+1] give.
func TestPack2MatchesGo(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(pack2Kernel))
	if err != nil {
		t.Fatal(err)
	}
	if got := countLines(entryBody(t, p, p.Kernels[0].Entry), `^ld\.global\.nc\.u32 `); got != 1 {
		t.Fatalf("the pair is not one 32-bit load (%d)", got)
	}
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	sites := p.Kernels[0].Sites
	for _, n := range []int{0, 1, 2, 5, 6} {
		for _, off := range []int{-2, -1, 0, 1, 2, 3} {
			dev := emu.NewDevice(emu.Options{})
			a, _ := dev.Alloc(2*n + 2)
			out, _ := dev.Alloc(4)
			raw := make([]byte, 2*n)
			for j := range n {
				binary.LittleEndian.PutUint16(raw[2*j:], uint16(0x1000+j))
			}
			if err := dev.Write(a, raw); err != nil {
				t.Fatal(err)
			}
			params := make([]byte, 40)
			binary.LittleEndian.PutUint64(params[0:], a)
			binary.LittleEndian.PutUint64(params[8:], uint64(n))
			binary.LittleEndian.PutUint64(params[16:], out)
			binary.LittleEndian.PutUint64(params[24:], 1)
			binary.LittleEndian.PutUint64(params[32:], uint64(int64(off)))
			// Launch errors are the failed check, read back below.
			_ = dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}, Params: params})
			got := "ok"
			if rec := readSlot(t, dev, m); rec.code != 0 {
				got = fmt.Sprintf("%s index %d len %d", sites[rec.site], int64(rec.index), rec.length)
			} else {
				w := make([]byte, 4)
				if err := dev.Read(out, w); err != nil {
					t.Fatal(err)
				}
				got = fmt.Sprintf("ok %#x", binary.LittleEndian.Uint32(w))
			}
			// Go: a[i] is checked first, then a[i+1].
			i := 2 * off
			want := ""
			switch {
			case i < 0 || i >= n:
				want = fmt.Sprintf("%s index %d len %d", sites[0], i, n)
			case i+1 >= n:
				want = fmt.Sprintf("%s index %d len %d", sites[1], i+1, n)
			default:
				want = fmt.Sprintf("ok %#x", uint32(0x1000+i)|uint32(0x1000+i+1)<<16)
			}
			if got != want {
				t.Errorf("len(a)=%d off=%d: got %s, want %s", n, off, got, want)
			}
		}
	}
}
