package emu

import (
	"bytes"
	"strings"
	"testing"
)

func TestPackAndLaunchByName(t *testing.T) {
	m, err := LoadFile("testdata/corpus/clang_sm80_O2.ptx")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := m.Entry("nbody")
	d := NewDevice(Options{})
	p, _ := d.Alloc(16)
	a, _ := d.Alloc(12)
	got, err := info.Pack(p, a, 1, float32(0.5))
	if err != nil {
		t.Fatal(err)
	}
	want := params{}.u64(p).u64(a).u32(1).f32(0.5)
	if !bytes.Equal(got, want) {
		t.Fatalf("Pack = %x, want %x", got, want)
	}
	// One body at the origin with mass 1 feels no force.
	if err := d.Write(p, f32bytes([]float32{0, 0, 0, 1})); err != nil {
		t.Fatal(err)
	}
	if err := d.Launch(m, "nbody", LaunchConfig{Grid: [3]int{1}, Block: [3]int{1}, DynamicShared: 16, Params: got}); err != nil {
		t.Fatal(err)
	}
	if acc := bytesF32(download(t, d, a, 12)); acc[0] != 0 || acc[1] != 0 || acc[2] != 0 {
		t.Errorf("acc = %v, want zeros", acc)
	}
}

func TestPackErrors(t *testing.T) {
	m := loadTestdata(t, "corpus/clang_sm80_O2.ptx")
	info, _ := m.Entry("nbody")
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{uint64(1), uint64(2), 3}, "takes 4 parameters, got 3"},
		{[]any{uint64(1), uint64(2), 3, 4}, "parameter 3 (nbody_param_3 .f32): an integer (int) for a float parameter"},
		{[]any{uint64(1), uint64(2), int64(1) << 40, float32(1)}, "does not fit in 32 bits"},
		{[]any{uint64(1), 2.5, 3, float32(1)}, "a float64 for a non-float parameter"},
		{[]any{"x", uint64(2), 3, float32(1)}, "unsupported argument type string"},
	} {
		if _, err := info.Pack(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Pack(%v) = %v, want an error containing %q", c.args, err, c.want)
		}
	}
	if _, err := LoadFile("testdata/nonexistent.ptx"); err == nil {
		t.Error("LoadFile of a missing file succeeded")
	}
}
