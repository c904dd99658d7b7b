package compiler

import (
	"math"
	"testing"

	"github.com/gokern/kern/emu"
)

// (x+1)·y and (x−1)·y after x·y are x·y ± y (distmul.go): one multiply
// fewer in the PTX, and the same wrapped result as Go's for operands at
// the ends of int64, int32 and uint32, where the products overflow.
func TestDistributedMul(t *testing.T) {
	const src = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel
func K(t gpu.Thread, in, out []uint64) {
	for i := 0; 2*i+1 < len(in); i++ {
		x, y := int64(in[2*i]), int64(in[2*i+1])
		a, b := int32(x), int32(y)
		u, v := uint32(x), uint32(y)
		out[8*i] = uint64(x * y)
		out[8*i+1] = uint64((x + 1) * y)
		out[8*i+2] = uint64(y * (x - 1))
		out[8*i+3] = uint64(a * b)
		out[8*i+4] = uint64(int64((a + 1) * b))
		out[8*i+5] = uint64(u * v)
		out[8*i+6] = uint64(v * (u - 1))
		out[8*i+7] = uint64((u + 1) * v)
	}
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	body := entryBody(t, p, "K")
	if got := countLines(body, `^mul\.lo\.[su](32|64) %\w+, %\w+, %\w+;`); got != 3 {
		t.Errorf("%d multiplies, want 3 (x·y, a·b, u·v):\n%s", got, body)
	}
	ext := []int64{0, 1, -1, 2, 3, 1000, -7, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32,
		math.MaxUint32, 1 << 32, 1<<62 + 5, -(1 << 40)}
	var in []uint64
	for _, x := range ext {
		for _, y := range ext {
			in = append(in, uint64(x), uint64(y))
		}
	}
	got, err := runK(emu.NewDevice(emu.Options{}), p.PTX, in, 4*len(in))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(in); i += 2 {
		x, y := int64(in[i]), int64(in[i+1])
		a, b := int32(x), int32(y)
		u, v := uint32(x), uint32(y)
		want := []uint64{uint64(x * y), uint64((x + 1) * y), uint64(y * (x - 1)), uint64(a * b),
			uint64(int64((a + 1) * b)), uint64(u * v), uint64(v * (u - 1)), uint64((u + 1) * v)}
		for j, w := range want {
			if g := got[4*i+j]; g != w {
				t.Errorf("x=%d y=%d: expression %d = %#x on the emulator, Go gives %#x", x, y, j, g, w)
			}
		}
	}
}

// In an unrolled loop the block is lowered once per iteration: (x+1)·z
// before x·z must not take the previous copy's x·z.
func TestDistributedMulUnrolled(t *testing.T) {
	const src = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel
func K(t gpu.Thread, in, out []uint64) {
	x := int64(in[0])
	//kern:unroll
	for j := 0; j < 4; j++ {
		z := x + int64(in[1+j])
		out[2*j] = uint64((x + 1) * z)
		out[2*j+1] = uint64(x * z)
	}
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	// Unrolled, and (x+1)·z, before x·z, multiplies: two per copy.
	if body := entryBody(t, p, "K"); countLines(body, `^mul\.lo\.s64 %\w+, %\w+, %\w+;`) != 8 {
		t.Errorf("want the loop unrolled with two products per copy:\n%s", body)
	}
	in := []uint64{7, 1, 10, 100, 1000}
	got, err := runK(emu.NewDevice(emu.Options{}), p.PTX, in, 8)
	if err != nil {
		t.Fatal(err)
	}
	x := int64(in[0])
	for j := range 4 {
		z := x + int64(in[1+j])
		if w := uint64((x + 1) * z); got[2*j] != w {
			t.Errorf("j=%d: (x+1)·z = %d on the emulator, Go gives %d", j, got[2*j], w)
		}
		if w := uint64(x * z); got[2*j+1] != w {
			t.Errorf("j=%d: x·z = %d on the emulator, Go gives %d", j, got[2*j+1], w)
		}
	}
}
