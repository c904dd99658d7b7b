package emu

import (
	"errors"
	"strings"
	"testing"
)

func TestDivergenceAndReconvergence(t *testing.T) {
	m := loadTestdata(t, "diverge.ptx")
	d := NewDevice(Options{})
	pout := upload(t, d, make([]byte, 2*64*4))
	if err := d.Launch(m, "diverge", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}, Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 2*64*4))
	acc := func(tid uint32) uint32 {
		x := tid + 100
		if tid%2 == 1 {
			x = 3 * tid
		}
		var a uint32
		for i := uint32(0); i < tid%7; i++ {
			a += i * x
		}
		return a
	}
	for tid := uint32(0); tid < 64; tid++ {
		if want := acc(tid) + acc(tid^1); out[tid] != want {
			t.Errorf("out[%d] = %d, want %d", tid, out[tid], want)
		}
		want := uint32(0x55555555)
		if tid%2 == 1 {
			want = 0xaaaaaaaa
		}
		if got := out[64+tid]; got != want {
			t.Errorf("activemask in the branch of thread %d = %#x, want %#x", tid, got, want)
		}
	}
}

func TestSplitBarrier(t *testing.T) {
	m := loadTestdata(t, "diverge.ptx")
	d := NewDevice(Options{})
	pout := upload(t, d, make([]byte, 64*4))
	if err := d.Launch(m, "split_barrier", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}, Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 64*4))
	for tid := uint32(0); tid < 64; tid++ {
		if want := 7*(tid&^1) + 1; out[tid] != want {
			t.Errorf("out[%d] = %d, want %d", tid, out[tid], want)
		}
	}
}

func TestBarrierIgnoresExitedThreads(t *testing.T) {
	m := loadTestdata(t, "diverge.ptx")
	d := NewDevice(Options{})
	pout := upload(t, d, make([]byte, 64*4))
	if err := d.Launch(m, "partial_exit", LaunchConfig{Grid: [3]int{2}, Block: [3]int{64}, Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 64*4))
	for tid := 0; tid < 64; tid++ {
		want := uint32(40)
		if tid >= 40 {
			want = 0
		}
		if out[tid] != want {
			t.Errorf("out[%d] = %d, want %d", tid, out[tid], want)
		}
	}
}

func TestBarrierDeadlock(t *testing.T) {
	m := loadTestdata(t, "diverge.ptx")
	d := NewDevice(Options{})
	err := d.Launch(m, "deadlock", LaunchConfig{Grid: [3]int{3}, Block: [3]int{64}})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrDeadlock) {
		t.Fatalf("err = %v, want a deadlock *Error", err)
	}
	if e.Block != [3]int{0, 0, 0} {
		t.Errorf("deadlock reported for block %v, want the lowest block (0,0,0)", e.Block)
	}
	for _, s := range []string{"warp 0: 32 threads at barrier 0", "warp 1: 32 threads at barrier 1"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q does not mention %q", err, s)
		}
	}
}
