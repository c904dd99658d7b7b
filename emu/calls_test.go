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

func TestRecursionAndIndirectCalls(t *testing.T) {
	m := loadTestdata(t, "fixedbugs/recursion.ptx")
	out := launchOut(t, m, "rec", 32, 96)
	var fib func(n uint32) uint32
	fib = func(n uint32) uint32 {
		if n < 2 {
			return n
		}
		return fib(n-1) + fib(n-2)
	}
	for tid := uint32(0); tid < 32; tid++ {
		if want := fib(tid % 16); out[tid] != want {
			t.Errorf("fib: out[%d] = %d, want %d", tid, out[tid], want)
		}
		if want := tid * (tid + 1) / 2; out[32+tid] != want {
			t.Errorf("sumto: out[%d] = %d, want %d", 32+tid, out[32+tid], want)
		}
		want := tid * tid
		if tid%2 == 1 {
			want = 2 * tid
		}
		if out[64+tid] != want {
			t.Errorf("indirect: out[%d] = %d, want %d", 64+tid, out[64+tid], want)
		}
	}
}

func TestRunawayRecursionFaults(t *testing.T) {
	m, err := Load([]byte(header + `
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
	if err != nil {
		t.Fatal(err)
	}
	err = NewDevice(Options{}).Launch(m, "k", LaunchConfig{Grid: [3]int{1}, Block: [3]int{1}})
	if err == nil || !strings.Contains(err.Error(), "call stack overflow") {
		t.Fatalf("err = %v, want a call stack overflow", err)
	}
}

func TestIndirectCallToNonFunctionFaults(t *testing.T) {
	m, err := Load([]byte(header + `
.visible .entry k()
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<2>;
	mov.u64 %rd1, 12345;
	call (%r1), %rd1, (%r0), proto;
	ret;
}`))
	if err != nil {
		t.Fatal(err)
	}
	err = NewDevice(Options{}).Launch(m, "k", LaunchConfig{Grid: [3]int{1}, Block: [3]int{1}})
	if err == nil || !strings.Contains(err.Error(), "not the address of a function") {
		t.Fatalf("err = %v, want a bad indirect call", err)
	}
}

// launchOut runs entry on one block of threads threads with one output
// buffer of n u32s.
func launchOut(t *testing.T, m *Module, entry string, threads, n int) []uint32 {
	t.Helper()
	d := NewDevice(Options{})
	pout := upload(t, d, make([]byte, 4*n))
	if err := d.Launch(m, entry, LaunchConfig{Grid: [3]int{1}, Block: [3]int{threads}, Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	return bytesU32(download(t, d, pout, 4*n))
}

// TestGuardedRecursiveCall: a predicated call on the call stack (the
// recursive one inside down) runs for the lanes whose guard holds; the
// others go on past it. The entry's own guarded call is expanded inline.
func TestGuardedRecursiveCall(t *testing.T) {
	m, err := Load([]byte(header + `
.func (.reg .b32 r) down(.reg .b32 n)
{
	.reg .pred %p<2>;
	.reg .b32 %m;
	setp.eq.u32 %p1, n, 0;
	mov.u32 r, 100;
	add.u32 %m, n, -1;
	@!%p1 call.uni (r), down, (%m);
	@!%p1 add.u32 r, r, 1;
	ret;
}
.visible .entry k(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, 7;
	and.b32 %r3, %r1, 1;
	setp.eq.u32 %p1, %r3, 1;
	@%p1 call.uni (%r2), down, (%r1);
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r2;
	ret;
}`))
	if err != nil {
		t.Fatal(err)
	}
	out := launchOut(t, m, "k", 32, 32)
	for i, v := range out {
		want := uint32(7)
		if i%2 == 1 {
			want = 100 + uint32(i) // down(n) = 100 + n
		}
		if v != want {
			t.Errorf("out[%d] = %d, want %d", i, v, want)
		}
	}
}
