package compiler

// Tests of unroll_partial.go: the golden file testdata/unrollby.go, and
// the sequence of counter values a partially unrolled loop runs, on the
// emulator, against the same loop run in Go, at trip counts that are and
// are not multiples of the factor, empty loops, a break, and a counter
// that wraps around (where the guard must fall back to the plain loop).

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/gokern/kern/emu"
)

func init() {
	goldenChecks["unrollby"] = func(t *testing.T, p *Package) {
		body := func(k string) string { return entryBody(t, p, kernelOf(t, p, k).Entry) }
		// 4 copies without the test and 3 with it, for the rest.
		if n := countLines(body("Sum"), `^add\.rn\.f32 `); n != 7 {
			t.Errorf("Sum: %d additions, want 7 (4 copies + 3 for the rest)", n)
		}
		if n := countLines(body("Sum"), `^setp\.lt\.s64 %p\d+, %rd\d+, %rd\d+;`); n < 4 {
			t.Errorf("Sum: %d signed compares, want the guard's 2 and the rest's", n)
		}
		if n := countLines(body("MMA"), `^mma\.sync\.aligned\.m16n8k16`); n != 3 {
			t.Errorf("MMA: %d mma, want 3 (2 copies + 1 for the rest)", n)
		}
	}
}

const unrollBySrc = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=1
func Seq(t gpu.Thread, out []int32, start, n int32) {
	c := 0
	//kern:unroll 4
	for i := start; i < n; i += 3 {
		if c == len(out) {
			break
		}
		out[c] = i
		c++
	}
}

//kern:kernel block=1
func Wrap(t gpu.Thread, out []int32, start, n uint8) {
	c := 0
	//kern:unroll 3
	for i := start; i < n; i += 100 {
		if c == len(out) {
			break
		}
		out[c] = int32(i)
		c++
	}
}
`

func TestPartialUnrollRunsTheSameIterations(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(unrollBySrc))
	if err != nil {
		t.Fatal(err)
	}
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	const size = 40
	run := func(kernel string, scalars []byte) []int32 {
		dev := emu.NewDevice(emu.Options{})
		out, _ := dev.Alloc(4 * size)
		init := make([]byte, 4*size)
		for i := range size {
			binary.LittleEndian.PutUint32(init[4*i:], 0xdeadbeef)
		}
		if err := dev.Write(out, init); err != nil {
			t.Fatal(err)
		}
		params := make([]byte, 16, 24)
		binary.LittleEndian.PutUint64(params[0:], out)
		binary.LittleEndian.PutUint64(params[8:], size)
		params = append(params, scalars...)
		if err := dev.Launch(m, kernel, emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}, Params: params}); err != nil {
			t.Fatalf("%s: %v", kernel, err)
		}
		got := make([]byte, 4*size)
		if err := dev.Read(out, got); err != nil {
			t.Fatal(err)
		}
		res := make([]int32, size)
		for i := range res {
			res[i] = int32(binary.LittleEndian.Uint32(got[4*i:]))
		}
		return res
	}
	fill := func(xs []int32) []int32 {
		out := slices.Repeat([]int32{int32(-559038737)}, size) // 0xdeadbeef
		copy(out, xs)
		return out
	}
	for _, start := range []int32{-7, 0, 1, 5} {
		for _, n := range []int32{-10, 0, 1, 2, 3, 4, 7, 12, 13, 24, 25, 37, 200} {
			var want []int32
			for i := start; i < n && len(want) < size; i += 3 {
				want = append(want, i)
			}
			sc := make([]byte, 8)
			binary.LittleEndian.PutUint32(sc[0:], uint32(start))
			binary.LittleEndian.PutUint32(sc[4:], uint32(n))
			if got := run("Seq", sc); fmt.Sprint(got) != fmt.Sprint(fill(want)) {
				t.Errorf("Seq start %d n %d:\n got %v\nwant %v", start, n, got, fill(want))
			}
		}
	}
	for _, start := range []uint8{0, 1, 99, 150, 200} {
		for _, n := range []uint8{0, 1, 100, 101, 201, 255} {
			var want []int32
			for i := start; i < n && len(want) < size; i += 100 {
				want = append(want, int32(i))
			}
			if got := run("Wrap", []byte{start, n}); fmt.Sprint(got) != fmt.Sprint(fill(want)) {
				t.Errorf("Wrap start %d n %d:\n got %v\nwant %v", start, n, got, fill(want))
			}
		}
	}
}
