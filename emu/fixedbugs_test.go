package emu

// Regression tests for the gaps found running clang's, nvcc's and
// Triton's PTX (issue 12), each from the smallest PTX that showed it
// (testdata/fixedbugs).

import (
	"errors"
	"strings"
	"testing"
)

// launch1D runs entry on n threads in blocks of 32 with one output
// buffer of n u32s and returns it.
func launch1D(t *testing.T, m *Module, entry string, n int) []uint32 {
	t.Helper()
	d := NewDevice(Options{})
	pout := upload(t, d, make([]byte, 4*n))
	if err := d.Launch(m, entry, LaunchConfig{Grid: [3]int{(n + 31) / 32}, Block: [3]int{32}, Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	return bytesU32(download(t, d, pout, 4*n))
}

func TestBlockScopes(t *testing.T) {
	m := loadTestdata(t, "fixedbugs/scopes.ptx")
	out := launch1D(t, m, "scopes", 32)
	for i, v := range out {
		if want := uint32(5*i + 18); v != want {
			t.Errorf("out[%d] = %d, want %d", i, v, want)
		}
	}
}

func TestScopedRegisterStillUnknownOutside(t *testing.T) {
	_, err := Load([]byte(header + `
.visible .entry k()
{
	{
		.reg .b32 %in;
		mov.u32 %in, 1;
	}
	mov.u32 %in, 2;
	ret;
}`))
	if err == nil || !strings.Contains(err.Error(), "line 11: unknown register %in") {
		t.Fatalf("err = %v, want an unknown register at line 11", err)
	}
}

func TestBadEntryFailsAtLaunch(t *testing.T) {
	m := loadTestdata(t, "fixedbugs/badentry.ptx")
	out := launch1D(t, m, "good", 32)
	for i, v := range out {
		if v != uint32(i+42) {
			t.Fatalf("out[%d] = %d, want %d", i, v, i+42)
		}
	}
	d := NewDevice(Options{})
	err := d.Launch(m, "bad", LaunchConfig{Grid: [3]int{1}, Block: [3]int{32}, Params: params{}.u64(0)})
	var ee *EntryError
	if !errors.As(err, &ee) || ee.Kernel != "bad" || !strings.Contains(err.Error(), "line 13: unsupported instruction frobnicate.u32") {
		t.Fatalf("launch of bad = %v, want its load error", err)
	}
	if m.EntryErr("good") != nil || m.EntryErr("bad") == nil {
		t.Errorf("EntryErr(good) = %v, EntryErr(bad) = %v", m.EntryErr("good"), m.EntryErr("bad"))
	}
	if n := len(m.Entries()); n != 1 {
		t.Errorf("Entries() lists %d entries, want the one that loaded", n)
	}
}
