package emu

import (
	"errors"
	"strings"
	"testing"
)

func TestVecAdd(t *testing.T) {
	m := loadTestdata(t, "vecadd.ptx")
	d := NewDevice(Options{})
	const n = 1000 // not a multiple of the block size: the bounds check matters
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i] = float32(i) * 0.5
		b[i] = float32(n - i)
	}
	pa, pb := upload(t, d, f32bytes(a)), upload(t, d, f32bytes(b))
	// One extra element past n, which the kernel must not touch.
	sentinel := make([]float32, n+1)
	sentinel[n] = 42
	pout := upload(t, d, f32bytes(sentinel))
	p := params{}.u64(pa).u64(n).u64(pb).u64(pout).u32(n)
	err := d.Launch(m, "vecadd", LaunchConfig{Grid: [3]int{(n + 255) / 256}, Block: [3]int{256}, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	out := bytesF32(download(t, d, pout, 4*(n+1)))
	for i := 0; i < n; i++ {
		if want := a[i] + b[i]; out[i] != want {
			t.Fatalf("out[%d] = %v, want %v", i, out[i], want)
		}
	}
	if out[n] != 42 {
		t.Errorf("out[%d] = %v: the bounds check failed", n, out[n])
	}
}

func TestVecAddOutOfBounds(t *testing.T) {
	m := loadTestdata(t, "vecadd.ptx")
	d := NewDevice(Options{})
	const n = 100
	pa := upload(t, d, make([]byte, 4*n))
	pb := upload(t, d, make([]byte, 4*(n-10))) // b is 10 elements short
	pout := upload(t, d, make([]byte, 4*n))
	p := params{}.u64(pa).u64(n).u64(pb).u64(pout).u32(n)
	err := d.Launch(m, "vecadd", LaunchConfig{Grid: [3]int{1}, Block: [3]int{128}, Params: p})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrOutOfBounds) {
		t.Fatalf("err = %v, want an *Error wrapping ErrOutOfBounds", err)
	}
	// Thread 90 is the first to read past b; the load is on Go line 12.
	if e.Thread != [3]int{90, 0, 0} || e.File != "/src/vec/add.go" || e.Line != 12 || e.Col != 3 {
		t.Errorf("fault at thread %v, %s:%d:%d; want thread (90,0,0) at /src/vec/add.go:12:3", e.Thread, e.File, e.Line, e.Col)
	}
	if e.Instr != "ld.global.nc.f32" || e.PTXLine != 44 {
		t.Errorf("fault in %s at PTX line %d, want ld.global.nc.f32 at line 44", e.Instr, e.PTXLine)
	}
	if !strings.Contains(err.Error(), "past the end") {
		t.Errorf("message %q does not say the access ran past the end of an allocation", err)
	}
}
