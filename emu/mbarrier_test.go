package emu

import (
	"errors"
	"testing"
)

// runPingpong launches testdata/mbarrier.ptx and returns out.
func runPingpong(t *testing.T, skip, expected uint32) ([]uint32, error) {
	t.Helper()
	m := loadTestdata(t, "mbarrier.ptx")
	d := NewDevice(Options{})
	out := upload(t, d, make([]byte, 4*32))
	err := d.Launch(m, "pingpong", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64},
		Params: params{}.u64(out).u32(skip).u32(expected)})
	if err != nil {
		return nil, err
	}
	return bytesU32(download(t, d, out, 4*32)), nil
}

// TestMbarrierPingpong hands a buffer between two warps four times: the
// phases, parities, arrival counts and transaction bytes all have to be
// right for every lane to read each round's data.
func TestMbarrierPingpong(t *testing.T) {
	got, err := runPingpong(t, 0, 32)
	if err != nil {
		t.Fatal(err)
	}
	for j, v := range got {
		if want := uint32(6000 + 4*j); v != want {
			t.Errorf("lane %d: sum %d, want %d", j, v, want)
		}
	}
}

// TestMbarrierSkippedWait plants a missing wait: the consumer then reads
// the buffer before the producer filled it, and the result is wrong.
func TestMbarrierSkippedWait(t *testing.T) {
	got, err := runPingpong(t, 1, 32)
	if err != nil {
		return // an mbarrier misuse reported is also a catch
	}
	wrong := 0
	for j, v := range got {
		if v != uint32(6000+4*j) {
			wrong++
		}
	}
	if wrong == 0 {
		t.Fatal("a consumer that skips its mbarrier wait got every value right")
	}
}

// TestMbarrierDeadlock gives the "full" barrier one arrival more than
// anyone makes: both warps end up spinning and the launch reports a
// deadlock instead of running to the step limit.
func TestMbarrierDeadlock(t *testing.T) {
	_, err := runPingpong(t, 0, 33)
	if !errors.Is(err, ErrDeadlock) {
		t.Fatalf("got %v, want ErrDeadlock", err)
	}
}
