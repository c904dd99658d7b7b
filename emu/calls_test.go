package emu

import (
	"strings"
	"testing"
)

func TestInlinedCalls(t *testing.T) {
	m := loadTestdata(t, "calls.ptx")
	d := NewDevice(Options{})
	pout := upload(t, d, make([]byte, 2*64*4))
	if err := d.Launch(m, "calls", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}, Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 2*64*4))
	clampsum := func(n uint32) uint32 {
		var r uint32
		for i := uint32(0); i < n; i++ {
			r += i
			if r > 100 {
				return 100
			}
		}
		return r
	}
	for tid := uint32(0); tid < 64; tid++ {
		if want := tid*3 + tid + 2*clampsum(tid); out[tid] != want {
			t.Errorf("out[%d] = %d, want %d", tid, out[tid], want)
		}
		want := uint32(0)
		if tid%2 == 1 {
			want = tid * tid
		}
		if out[64+tid] != want {
			t.Errorf("guarded call: out[%d] = %d, want %d", 64+tid, out[64+tid], want)
		}
	}
	// clampsum's 8-byte local array is added to the entry's frame.
	if info, _ := m.Entry("calls"); info.LocalBytes < 8 {
		t.Errorf("local bytes %d, want at least 8", info.LocalBytes)
	}
}

func TestRecursiveCallIsALoadError(t *testing.T) {
	_, err := Load([]byte(header + `
.func (.reg .b32 r) f(.reg .b32 x)
{
	call.uni (r), f, (x);
	ret;
}
.visible .entry k()
{
	.reg .b32 %r<2>;
	call.uni (%r1), f, (%r0);
	ret;
}`))
	if err == nil || !strings.Contains(err.Error(), "recursive (k -> f -> f)") {
		t.Fatalf("err = %v, want a recursion error", err)
	}
}
