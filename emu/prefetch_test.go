package emu

import (
	"strings"
	"testing"
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
