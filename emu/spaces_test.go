package emu

import (
	"encoding/binary"
	"testing"
)

func TestStateSpaces(t *testing.T) {
	m := loadTestdata(t, "spaces.ptx")
	info, ok := m.Entry("spaces")
	if !ok {
		t.Fatal("no entry spaces")
	}
	// sbuf (128) + bytes (32) = 160 static bytes; dyn starts 16-aligned.
	if info.StaticShared != 160 || info.DynamicOffset != 160 || info.LocalBytes != 64 {
		t.Errorf("layout: static %d, dynamic at %d, local %d; want 160, 160, 64", info.StaticShared, info.DynamicOffset, info.LocalBytes)
	}
	if len(info.Params) != 2 || info.Params[1] != (Param{Name: "k", Type: "u32", Size: 4, Align: 4, Offset: 8}) {
		t.Errorf("params = %+v", info.Params)
	}
	d := NewDevice(Options{})
	pout := upload(t, d, make([]byte, 1028))
	const k = 5
	cfg := LaunchConfig{Grid: [3]int{1}, Block: [3]int{32}, DynamicShared: 128, Params: params{}.u64(pout).u32(k)}
	if err := d.Launch(m, "spaces", cfg); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 1024))
	for tid := uint32(0); tid < 32; tid++ {
		w := out[8*tid:]
		next := (tid + 1) % 32
		want := []uint32{3 * next, tid + k, 5 * next, 160, []uint32{10, 20, 30, 40}[tid&3],
			uint32(int32(int8(0x80 + tid))), 0x80 + tid, 1}
		for j := range want {
			if w[j] != want[j] {
				t.Errorf("thread %d word %d = %#x, want %#x", tid, j, w[j], want[j])
			}
		}
	}
	tail := download(t, d, pout+1024, 4)
	if v := binary.LittleEndian.Uint32(tail); v != 0x5678 {
		t.Errorf("st.u16 of 0x12345678 wrote %#x, want 0x5678", v)
	}
	addr, size, err := d.Global(m, "counter")
	if err != nil || size != 4 {
		t.Fatalf("Global(counter) = %#x, %d, %v", addr, size, err)
	}
	if v := binary.LittleEndian.Uint32(download(t, d, addr, 4)); v != 7+32 {
		t.Errorf("counter = %d, want 39", v)
	}
	if _, size, err := d.Global(m, "kern_error"); err != nil || size != 32 {
		t.Errorf("Global(kern_error) size %d, %v; want 32", size, err)
	}
	// A second device has its own copy of the module's globals.
	d2 := NewDevice(Options{})
	addr2, _, err := d2.Global(m, "counter")
	if err != nil || binary.LittleEndian.Uint32(download(t, d2, addr2, 4)) != 7 {
		t.Errorf("a new device's counter is not the initial 7 (%v)", err)
	}
	// Without dynamic shared memory the store to dyn is out of bounds.
	cfg.DynamicShared = 0
	if err := d.Launch(m, "spaces", cfg); err == nil {
		t.Error("launch without dynamic shared memory succeeded")
	}
}

func TestDeviceMemory(t *testing.T) {
	d := NewDevice(Options{})
	a, err := d.Alloc(1000)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := d.Alloc(10)
	if a < globalBase || a%256 != 0 || b%256 != 0 || b < a+1000 {
		t.Errorf("allocations at %#x and %#x: want 256-aligned, from %#x, disjoint", a, b, uint64(globalBase))
	}
	if err := d.Memset(a+10, 0xAB, 20); err != nil {
		t.Fatal(err)
	}
	got := download(t, d, a+8, 4)
	if got[0] != 0 || got[1] != 0 || got[2] != 0xAB || got[3] != 0xAB {
		t.Errorf("memset bytes %x", got)
	}
	if err := d.Write(a+990, make([]byte, 20)); err == nil {
		t.Error("write past the end of an allocation succeeded")
	}
	if err := d.Free(a + 8); err == nil {
		t.Error("Free of an interior pointer succeeded")
	}
	if err := d.Free(a); err != nil {
		t.Fatal(err)
	}
	if err := d.Read(a, make([]byte, 4)); err == nil {
		t.Error("read of freed memory succeeded")
	}
	if err := d.Free(a); err == nil {
		t.Error("double free succeeded")
	}
}

func TestThreadNumbering(t *testing.T) {
	m := loadTestdata(t, "dims.ptx")
	d := NewDevice(Options{})
	grid, block := [3]int{3, 2, 2}, [3]int{5, 4, 3} // 60 threads: one full warp and one partial
	n := 12 * 60
	pout := upload(t, d, make([]byte, 32*n))
	if err := d.Launch(m, "dims", LaunchConfig{Grid: grid, Block: block, Params: params{}.u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 32*n))
	g := 0
	for bz := 0; bz < 2; bz++ {
		for by := 0; by < 2; by++ {
			for bx := 0; bx < 3; bx++ {
				for tz := 0; tz < 3; tz++ {
					for ty := 0; ty < 4; ty++ {
						for tx := 0; tx < 5; tx++ {
							lin := (tz*4+ty)*5 + tx
							want := []uint32{uint32(tx), uint32(ty), uint32(tz), uint32(bx), uint32(by), uint32(bz), uint32(lin % 32), uint32(lin / 32)}
							for j, w := range want {
								if got := out[8*g+j]; got != w {
									t.Fatalf("thread (%d,%d,%d) of block (%d,%d,%d): word %d = %d, want %d", tx, ty, tz, bx, by, bz, j, got, w)
								}
							}
							g++
						}
					}
				}
			}
		}
	}
}
