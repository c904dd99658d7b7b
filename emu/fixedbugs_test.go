package emu

// Regression tests for the gaps found running clang's, nvcc's and
// Triton's PTX (issue 12), each from the smallest PTX that showed it
// (testdata/fixedbugs).

import (
	"errors"
	"math/bits"
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

func TestCarryArithmetic(t *testing.T) {
	m := loadTestdata(t, "fixedbugs/carry.ptx")
	const n = 64
	in := make([]uint64, 4*n)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range in {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		in[i] = x
		if i%8 == 0 {
			in[i] = ^uint64(0) // carries all the way through the low word
		}
	}
	d := NewDevice(Options{})
	pin := upload(t, d, u64bytes(in))
	pout := upload(t, d, make([]byte, 8*7*n))
	if err := d.Launch(m, "carry", LaunchConfig{Grid: [3]int{1}, Block: [3]int{n}, Params: params{}.u64(pin).u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesU64(download(t, d, pout, 8*7*n))
	for i := 0; i < n; i++ {
		alo, ahi, blo, bhi := in[4*i], in[4*i+1], in[4*i+2], in[4*i+3]
		slo, c := bits.Add64(alo, blo, 0)
		shi, _ := bits.Add64(ahi, bhi, c)
		dlo, b := bits.Sub64(alo, blo, 0)
		dhi, _ := bits.Sub64(ahi, bhi, b)
		want := []uint64{slo, shi, dlo, dhi, slo, c, uint64(uint32(alo))*uint64(uint32(blo)) + ahi}
		for j, w := range want {
			if got := out[7*i+j]; got != w {
				t.Errorf("thread %d word %d = %#x, want %#x", i, j, got, w)
			}
		}
	}
}

// TestBadFuncRejectsOnlyItsCallers: a .func emu cannot decode fails the
// entries that call it, at their launch, and no other.
func TestBadFuncRejectsOnlyItsCallers(t *testing.T) {
	m, err := Load([]byte(header + `
.func (.reg .b32 r) odd(.reg .b32 x)
{
	frobnicate.b32 r, x;
	ret;
}
.visible .entry caller()
{
	.reg .b32 %r<2>;
	call.uni (%r1), odd, (%r0);
	ret;
}
.visible .entry other()
{
	ret;
}`))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDevice(Options{})
	if err := d.Launch(m, "other", LaunchConfig{}); err != nil {
		t.Errorf("other: %v", err)
	}
	err = d.Launch(m, "caller", LaunchConfig{})
	if err == nil || !strings.Contains(err.Error(), "kernel caller did not load: ptx line 7: unsupported instruction frobnicate.b32") {
		t.Errorf("caller: %v", err)
	}
	if got := m.BadEntries(); len(got) != 1 || got[0] != "caller" {
		t.Errorf("BadEntries() = %v", got)
	}
}

// TestHalfHelperInlineAsm: cuda_fp16.hpp's inline asm writes ".reg.b16"
// with no space (one token) and compares halves with set.*.f16x2 (h2exp,
// __heq2); both were load errors.
func TestHalfHelperInlineAsm(t *testing.T) {
	m, err := Load([]byte(header + `
.visible .entry k(.param .u64 out)
{
	.reg .b64 %rd<2>;
	.reg .b32 %r<4>;
	ld.param.u64 %rd1, [out];
	{.reg.b16 lo, hi;
	.reg.b32 x, y;
	mov.b32 x, 0x3c00c000;   // halves (1, -2): lo = -2, hi = 1
	mov.b32 y, 0x3c003c00;   // (1, 1)
	mov.b32 {lo, hi}, x;
	set.eq.f16x2.f16x2 %r1, x, y;
	set.lt.u32.f16x2 %r2, x, y;
	mov.b32 %r3, {hi, lo};
	}
	st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r3};
	ret;
}`))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDevice(Options{})
	pout := upload(t, d, make([]byte, 16))
	if err := d.Launch(m, "k", LaunchConfig{Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	got := bytesU32(download(t, d, pout, 16))
	// eq: lo -2 != 1 -> 0, hi 1 == 1 -> 1.0; lt: lo -2 < 1 -> 0xffff, hi no.
	if want := []uint32{0x3c000000, 0x0000ffff, 0xc0003c00}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("got %#08x, want %#08x", got[:3], want)
	}
}

// TestReservedSharedMemory: nvcc -G builds of cooperative groups keep
// scratch at %reserved_smem_offset_1; emu gives such kernels a reserved
// region after their own shared memory, so the scratch and the kernel's
// variables do not overlap.
func TestReservedSharedMemory(t *testing.T) {
	m, err := Load([]byte(header + `
.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<6>;
	.reg .b64 %rd<4>;
	.shared .align 4 .b8 mine[64];
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %reserved_smem_offset_1;
	mov.u32 %r2, %reserved_smem_offset_begin;
	mov.u32 %r3, %reserved_smem_offset_cap;
	st.shared.u32 [mine], 7;
	st.shared.u32 [%r1], 9;
	ld.shared.u32 %r4, [mine];
	ld.shared.u32 %r5, [%r1];
	st.global.v4.u32 [%rd1], {%r2, %r3, %r4, %r5};
	ret;
}`))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDevice(Options{Memcheck: true})
	pout := upload(t, d, make([]byte, 16))
	if err := d.Launch(m, "k", LaunchConfig{Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	got := bytesU32(download(t, d, pout, 16))
	if got[0] < 64 || got[1] == 0 || got[2] != 7 || got[3] != 9 {
		t.Errorf("begin %d cap %d mine %d scratch %d; want begin >= 64 (after mine), a capacity, 7 and 9", got[0], got[1], got[2], got[3])
	}
}
