package kern

import (
	"math"
	"testing"

	"github.com/gokern/kern/gpu"
)

// The launch rule of a 32-bit entry (index32.go), at each bound.
func TestIndex32Fits(t *testing.T) {
	spec := &KernelSpec{Entry: "K", Entry32: "K_i32", Block: gpu.Dim3{X: 32, Y: 8, Z: 1}, Params: []Param{
		{Name: "x", Kind: SliceParam, Elem: "float32", Size: 4},
		{Name: "n", Kind: ScalarParam, Elem: "int", Size: 8},
		{Name: "u", Kind: ScalarParam, Elem: "uint64", Size: 8},
		{Name: "w", Kind: ScalarParam, Elem: "uint32", Size: 4},
		{Name: "f", Kind: ScalarParam, Elem: "float64", Size: 8},
	}}
	neg := int64(math.MinInt32)
	args := func(n int, i int64, u uint64) []argValue {
		return []argValue{{n: n}, {bits: uint64(i)}, {bits: u}, {bits: math.MaxUint32}, {bits: math.Float64bits(-1e300)}}
	}
	ok := gpu.Dim3{X: 1 << 26, Y: 65535, Z: 65535}
	for _, c := range []struct {
		name   string
		args   []argValue
		blocks gpu.Dim3
		want   bool
	}{
		{"all at their bounds", args(math.MaxInt32, math.MaxInt32, math.MaxInt32), ok, true},
		{"int at MinInt32", args(0, neg, 0), ok, true},
		{"a buffer of 2^31 elements", args(1<<31, 0, 0), ok, false},
		{"int past MaxInt32", args(0, math.MaxInt32+1, 0), ok, false},
		{"int below MinInt32", args(0, neg-1, 0), ok, false},
		{"uint64 past MaxInt32", args(0, 0, math.MaxInt32+1), ok, false},
		{"2^31/32 + 1 blocks along x", args(0, 0, 0), gpu.Dim3{X: 1<<26 + 1, Y: 1, Z: 1}, false},
	} {
		if got := index32Fits(spec, c.args, c.blocks); got != c.want {
			t.Errorf("%s: index32Fits = %v, want %v", c.name, got, c.want)
		}
		k := &Kernel{spec: *spec}
		want := "K"
		if c.want {
			want = "K_i32"
		}
		if got := k.entry(&launch{args: c.args, blocks: c.blocks}); got != want {
			t.Errorf("%s: entry %s, want %s", c.name, got, want)
		}
	}
	// Without a directive a block may be 1024 wide.
	spec.Block = gpu.Dim3{}
	if index32Fits(spec, args(0, 0, 0), gpu.Dim3{X: 1<<21 + 1, Y: 1, Z: 1}) || !index32Fits(spec, args(0, 0, 0), gpu.Dim3{X: 1 << 21, Y: 1, Z: 1}) {
		t.Errorf("without block=, the bound along x is 2^31/1024 blocks")
	}
	spec.Entry32 = ""
	if got := (&Kernel{spec: *spec}).entry(&launch{args: args(0, 0, 0), blocks: ok}); got != "K" {
		t.Errorf("a kernel without a 32-bit entry runs %s", got)
	}
}

// A 32-bit entry with launch facts (KernelSpec.Facts32) runs only where
// every fact holds, evaluated exactly; a fact that does not parse never
// holds.
func TestIndex32Facts(t *testing.T) {
	spec := &KernelSpec{Entry: "K", Entry32: "K_i32", Block: gpu.Dim3{X: 32, Y: 8, Z: 1}, Params: []Param{
		{Name: "in", Kind: SliceParam, Elem: "float32", Size: 4},
		{Name: "rows", Kind: ScalarParam, Elem: "int", Size: 8},
		{Name: "cols", Kind: ScalarParam, Elem: "int", Size: 8},
	}, Facts32: []string{"(>= p2 0)", "(>= l0 (* p1 p2))"}}
	args := func(n int, rows, cols int64) []argValue {
		return []argValue{{n: n}, {bits: uint64(rows)}, {bits: uint64(cols)}}
	}
	blocks := gpu.Dim3{X: 1, Y: 1, Z: 1}
	k := &Kernel{spec: *spec}
	for _, c := range []struct {
		name string
		args []argValue
		want string
	}{
		{"len = rows·cols", args(70*45, 70, 45), "K_i32"},
		{"len one short", args(70*45-1, 70, 45), "K"},
		{"negative cols", args(100, 3, -1), "K"},
		{"zero rows", args(0, 0, 45), "K_i32"},
		{"rows·cols past int32 (fits int64)", args(math.MaxInt32, math.MaxInt32, 2), "K"},
	} {
		// One kernel for every case, each launched twice: the answer kept
		// for the last launch's arguments (factMemo) must not leak into
		// the next one's.
		for range 2 {
			if got := k.entry(&launch{args: c.args, blocks: blocks}); got != c.want {
				t.Errorf("%s: entry %s, want %s", c.name, got, c.want)
			}
		}
	}
	spec.Facts32 = []string{"(>= l0 (% p1 p2))"}
	if got := (&Kernel{spec: *spec}).entry(&launch{args: args(10, 1, 1), blocks: blocks}); got != "K" {
		t.Errorf("a fact that does not parse: entry %s, want K", got)
	}
}
