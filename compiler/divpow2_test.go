package compiler

// Signed division and remainder by a constant power of two are lowered
// without a division (signedDivPow2), and x % y after x / y as
// x − (x/y)·y (divPartner). Both are checked here on the emulator against
// Go's truncated semantics at the values where a biased shift goes wrong
// first: zero, ±1, ±c, ±c±1, the extremes.

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

func TestSignedDivRemByPowerOfTwo(t *testing.T) {
	xs := []int64{0, 1, -1, 2, -2, 7, -7, 8, -8, 9, -9, 15, -15, 16, -16, 17, -17, 1000, -1000,
		math.MaxInt32, math.MinInt32, math.MinInt32 + 1, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, -1 << 40, -(1<<40 + 3)}
	cs := []int64{2, 8, 16, 1 << 20, 1 << 31, 1 << 62}
	var src strings.Builder
	src.WriteString("package k\n\nimport \"github.com/gokern/kern/gpu\"\n\n//kern:kernel\nfunc K(t gpu.Thread, in, out []uint64) {\n\tx := int64(in[0])\n\ty := int32(in[0])\n")
	var want []func(x int64) uint64
	for _, c := range cs {
		fmt.Fprintf(&src, "\tout[%d] = uint64(x / %d)\n\tout[%d] = uint64(x %% %d)\n", len(want), c, len(want)+1, c)
		want = append(want, func(x int64) uint64 { return uint64(x / c) }, func(x int64) uint64 { return uint64(x % c) })
		if c <= 1<<30 {
			fmt.Fprintf(&src, "\tout[%d] = uint64(int64(y / %d))\n\tout[%d] = uint64(int64(y %% %d))\n", len(want), c, len(want)+1, c)
			c32 := int32(c)
			want = append(want, func(x int64) uint64 { return uint64(int64(int32(x) / c32)) }, func(x int64) uint64 { return uint64(int64(int32(x) % c32)) })
		}
	}
	src.WriteString("}\n")
	p, err := CompileSource(Config{}, "k.go", []byte(src.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, src.String())
	}
	if strings.Contains(p.PTX, "div.s") || strings.Contains(p.PTX, "rem.s") {
		t.Errorf("a signed division by a power of two was left a div/rem:\n%s", p.PTX)
	}
	dev := emu.NewDevice(emu.Options{})
	for _, x := range xs {
		got, err := runK(dev, p.PTX, []uint64{uint64(x)}, len(want))
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if got[i] != w(x) {
				t.Errorf("x=%d: output %d (%s) = %d on the emulator, Go gives %d", x, i, strings.TrimSpace(strings.Split(src.String(), "\n")[8+i]), int64(got[i]), int64(w(x)))
			}
		}
	}
}

func TestRemainderAfterQuotient(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel
func K(t gpu.Thread, in, out []uint64) {
	x, y := int64(in[0]), int64(in[1])
	q, r := x/y, x%y
	out[0], out[1] = uint64(q), uint64(r)
	a, b := int32(in[0]), int32(in[1])
	out[2], out[3] = uint64(a/b), uint64(a%b)
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.PTX, "rem.") {
		t.Errorf("x %% y after x / y still divides:\n%s", p.PTX)
	}
	dev := emu.NewDevice(emu.Options{})
	vals := []int64{0, 1, -1, 3, -3, 7, -7, 1 << 33, -(1 << 33), math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64}
	for _, x := range vals {
		for _, y := range vals {
			if y == 0 || int32(y) == 0 {
				continue
			}
			got, err := runK(dev, p.PTX, []uint64{uint64(x), uint64(y)}, 4)
			if err != nil {
				t.Fatal(err)
			}
			a, b := int32(x), int32(y)
			want := []uint64{uint64(x / y), uint64(x % y), uint64(a / b), uint64(a % b)}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("x=%d y=%d: output %d = %d on the emulator, Go gives %d", x, y, i, int64(got[i]), int64(want[i]))
				}
			}
		}
	}
}
