package emu

import (
	"errors"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// Every prefetch form runs as nothing: the kernel's result is the one
// without them, and prefetches of addresses no allocation holds (all
// lanes, and odd lanes under a guard) do not fault, with the sanitizer on
// too.
func TestPrefetchIsAHint(t *testing.T) {
	m := loadTestdata(t, "prefetch.ptx")
	for _, opts := range []Options{{}, {Memcheck: true, Racecheck: true, Synccheck: true}} {
		d := NewDevice(opts)
		in := make([]float32, 64)
		for i := range in {
			in[i] = float32(i) * 0.5
		}
		pin := upload(t, d, f32bytes(in))
		pout := upload(t, d, make([]byte, 4*len(in)))
		cfg := LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}, Params: params{}.u64(pin).u64(pout)}
		if err := d.Launch(m, "prefetch", cfg); err != nil {
			t.Fatalf("%+v: %v", opts, err)
		}
		out := bytesF32(download(t, d, pout, 4*len(in)))
		for i, v := range out {
			if want := in[i] + 1; v != want {
				t.Errorf("%+v: out[%d] = %v, want %v", opts, i, v, want)
			}
		}
	}
}

// Forms the ISA does not have are load errors naming the instruction.
func TestPrefetchForms(t *testing.T) {
	const head = `.version 7.4
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [p];
	`
	for _, c := range []struct{ instr, want string }{
		{"prefetch.shared.L2 [%rd1];", "prefetch takes a .global, .local or generic address"},
		{"prefetch.global [%rd1];", "want the cache level .L1 or .L2"},
		{"prefetch.global.L3 [%rd1];", "want the cache level"},
		{"prefetchu.global.L1 [%rd1];", "want prefetchu.L1"},
		{"prefetch.global.L2 %rd1;", "expected an address"},
		{"prefetch.global.L2 [%rd1], 16;", "want 1 operands"},
		{"prefetch.global.L2 [%rd9];", "rd9"},
	} {
		_, err := Load([]byte(head + c.instr + "\n\tret;\n}\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.instr, err, c.want)
		}
	}
}

// cp.async.bulk.prefetch.L2.global (sm_90): nothing is read, an address
// outside every allocation is fine, and a misaligned address or a size
// that is not a multiple of 16 faults, as the ISA requires them.
func TestBulkPrefetch(t *testing.T) {
	const src = `.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 off, .param .u32 n)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [p];
	ld.param.u64 %rd2, [off];
	ld.param.u32 %r1, [n];
	add.s64 %rd3, %rd1, %rd2;
	cp.async.bulk.prefetch.L2.global [%rd3], %r1;
	ret;
}
`
	m, err := Load([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDevice(Options{Memcheck: true})
	p := upload(t, d, make([]byte, 256))
	for _, c := range []struct {
		off    uint64
		n      uint32
		faults bool
	}{{0, 256, false}, {16, 4096, false}, {1 << 40, 16, false}, {0, 0, false}, {8, 16, true}, {0, 24, true}} {
		err := d.Launch(m, "k", LaunchConfig{Grid: [3]int{1}, Block: [3]int{1}, Params: params{}.u64(p).u64(c.off).u32(c.n)})
		if got := err != nil; got != c.faults || c.faults && !errors.Is(err, ErrMisaligned) {
			t.Errorf("offset %d, %d bytes: %v, want a fault: %v", c.off, c.n, err, c.faults)
		}
	}
	ptxas.Check(t, "bulkprefetch", []byte(src), "sm_90")
	if _, err := Load([]byte(strings.Replace(src, "[%rd3], %r1;", "[%rd3];", 1))); err == nil || !strings.Contains(err.Error(), "want cp.async.bulk.prefetch.L2.global [a], size") {
		t.Errorf("a bulk prefetch without a size: %v", err)
	}
}
