package emu

import (
	"math/rand"
	"testing"
)

func TestBlockReduce(t *testing.T) {
	m := loadTestdata(t, "reduce.ptx")
	d := NewDevice(Options{})
	const blocks = 37
	in := make([]float32, blocks*256)
	r := rand.New(rand.NewSource(1))
	for i := range in {
		in[i] = float32(r.Intn(1000) - 500) // integers: every summation order is exact
	}
	pin := upload(t, d, f32bytes(in))
	pout := upload(t, d, make([]byte, 4*blocks))
	if err := d.Launch(m, "block_sum", LaunchConfig{Grid: [3]int{blocks}, Block: [3]int{256}, Params: params{}.u64(pin).u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesF32(download(t, d, pout, 4*blocks))
	for b := 0; b < blocks; b++ {
		var want float32
		for _, v := range in[b*256 : (b+1)*256] {
			want += v
		}
		if out[b] != want {
			t.Errorf("block %d: sum %v, want %v", b, out[b], want)
		}
	}
}

func TestBlockReduceWrongBlockSize(t *testing.T) {
	m := loadTestdata(t, "reduce.ptx")
	d := NewDevice(Options{})
	err := d.Launch(m, "block_sum", LaunchConfig{Grid: [3]int{1}, Block: [3]int{128}, Params: params{}.u64(0).u64(0)})
	if err == nil {
		t.Fatal("launch with a block size other than .reqntid succeeded")
	}
}

func TestShuffleModes(t *testing.T) {
	m := loadTestdata(t, "shfl.ptx")
	d := NewDevice(Options{})
	in := make([]uint32, 32)
	r := rand.New(rand.NewSource(2))
	for i := range in {
		in[i] = uint32(r.Intn(1000))
	}
	pin := upload(t, d, u32bytes(in))
	pout := upload(t, d, make([]byte, 5*32*4))
	if err := d.Launch(m, "shfl_modes", LaunchConfig{Grid: [3]int{1}, Block: [3]int{32}, Params: params{}.u64(pin).u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 5*32*4))
	var total, mx, prefix uint32
	for _, v := range in {
		total += v
		mx = max(mx, v)
	}
	if out[0] != total {
		t.Errorf("shfl.down sum: lane 0 has %d, want %d", out[0], total)
	}
	for l := 0; l < 32; l++ {
		prefix += in[l]
		if got := out[32+l]; got != prefix {
			t.Errorf("shfl.up scan: lane %d has %d, want %d", l, got, prefix)
		}
		if got := out[64+l]; got != mx {
			t.Errorf("shfl.bfly max: lane %d has %d, want %d", l, got, mx)
		}
		if got, want := out[96+l], in[l&^7|5]; got != want {
			t.Errorf("shfl.idx width 8: lane %d has %d, want lane %d's %d", l, got, l&^7|5, want)
		}
		// Down by 3 in 8-lane segments: lanes 0-4 of a segment read
		// lane+3 (p true), lanes 5-7 keep their own value (p false).
		want := in[l] // p false
		if l%8 < 5 {
			want = in[l+3] | 1<<31
		}
		if got := out[128+l]; got != want {
			t.Errorf("shfl.down width 8: lane %d has %#x, want %#x", l, got, want)
		}
	}
}

func TestVoteReduxMatch(t *testing.T) {
	m := loadTestdata(t, "vote.ptx")
	d := NewDevice(Options{})
	pout := upload(t, d, make([]byte, 32*32))
	if err := d.Launch(m, "vote", LaunchConfig{Grid: [3]int{1}, Block: [3]int{32}, Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 32*32))
	var ballot uint32
	for l := 0; l < 32; l++ {
		if l%3 == 0 {
			ballot |= 1 << l
		}
	}
	for l := 0; l < 32; l++ {
		want := []uint32{ballot, 0, 1, 0, 1, 31 * 32 / 2, 0, 0xf << (4 * (l / 4))}
		for j, w := range want {
			if got := out[8*l+j]; got != w {
				t.Errorf("lane %d word %d = %#x, want %#x", l, j, got, w)
			}
		}
	}
}

func TestBarrierReduction(t *testing.T) {
	m := loadTestdata(t, "vote.ptx")
	d := NewDevice(Options{})
	pout := upload(t, d, make([]byte, 96*16))
	if err := d.Launch(m, "bar_red", LaunchConfig{Grid: [3]int{2}, Block: [3]int{96}, Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 96*16))
	for tid := 0; tid < 96; tid++ {
		want := []uint32{20, 1, 1, 0} // 20 multiples of 5 below 96
		for j, w := range want {
			if got := out[4*tid+j]; got != w {
				t.Errorf("thread %d word %d = %d, want %d", tid, j, got, w)
			}
		}
	}
}
