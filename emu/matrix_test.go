package emu

import (
	"encoding/binary"
	"strings"
	"testing"
)

func TestLdmatrix(t *testing.T) {
	m := loadTestdata(t, "ldmatrix.ptx")
	d := NewDevice(Options{})
	var tile [16][16]uint16
	src := make([]byte, 512)
	for r := 0; r < 16; r++ {
		for c := 0; c < 16; c++ {
			tile[r][c] = uint16(r<<8 | c | 0x8000)
			binary.LittleEndian.PutUint16(src[(r*16+c)*2:], tile[r][c])
		}
	}
	psrc := upload(t, d, src)
	pout := upload(t, d, make([]byte, 32*64))
	if err := d.Launch(m, "ldm", LaunchConfig{Grid: [3]int{1}, Block: [3]int{32}, Params: params{}.u64(psrc).u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 32*64))
	// mat(i, r, c) is element (r, c) of matrix i of the x4 layout.
	mat := func(i, r, c int) uint32 { return uint32(tile[8*(i&1)+r][8*(i>>1)+c]) }
	frag := func(i, lane int, trans bool) uint32 {
		r, c := lane/4, 2*(lane%4)
		if trans {
			return mat(i, c, r) | mat(i, c+1, r)<<16
		}
		return mat(i, r, c) | mat(i, r, c+1)<<16
	}
	for lane := 0; lane < 32; lane++ {
		w := out[16*lane:]
		want := []uint32{
			frag(0, lane, false),
			frag(0, lane, false), frag(1, lane, false),
			frag(0, lane, false), frag(1, lane, false), frag(2, lane, false), frag(3, lane, false),
			frag(0, lane, true), frag(1, lane, true), frag(2, lane, true), frag(3, lane, true),
			frag(0, lane, true), frag(1, lane, true),
			frag(0, lane, true),
		}
		names := []string{"x1", "x2[0]", "x2[1]", "x4[0]", "x4[1]", "x4[2]", "x4[3]",
			"x4.trans[0]", "x4.trans[1]", "x4.trans[2]", "x4.trans[3]", "x2.trans[0]", "x2.trans[1]", "x1.trans"}
		for j := range want {
			if w[j] != want[j] {
				t.Errorf("lane %d %s = %#08x, want %#08x", lane, names[j], w[j], want[j])
			}
		}
	}
}

func TestCpAsyncVisibility(t *testing.T) {
	m := loadTestdata(t, "cpasync.ptx")
	d := NewDevice(Options{})
	src := make([]byte, 512)
	for i := range src {
		src[i] = byte(i*7 + 1)
	}
	psrc := upload(t, d, src)
	pout := upload(t, d, make([]byte, 32*32))
	if err := d.Launch(m, "cpasync", LaunchConfig{Grid: [3]int{1}, Block: [3]int{32}, Params: params{}.u64(psrc).u64(pout)}); err != nil {
		t.Fatal(err)
	}
	out := bytesU32(download(t, d, pout, 32*32))
	const stale = 0xAAAAAAAA
	for lane := 0; lane < 32; lane++ {
		word := func(k int) uint32 { return binary.LittleEndian.Uint32(src[16*lane+4*k:]) }
		w := out[8*lane:]
		checks := []struct {
			what      string
			got, want uint32
		}{
			{"before wait_group", w[0], stale},
			{"after wait_group 0", w[1], word(0)},
			{"zero-fill word 0 (copied)", w[2], word(0)},
			{"zero-fill word 1", w[3], 0},
			{"group 1 after wait_group 1", w[4], word(0)},
			{"group 2 after wait_group 1", w[5], stale},
			{"group 2 after wait_all", w[6], word(1)},
			{"ignore-src copy", w[7], 0},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("lane %d: %s = %#08x, want %#08x", lane, c.what, c.got, c.want)
			}
		}
	}
}

// TestProfileCpAsyncSource: the profiler sees a cp.async's global read as
// a load (each lane's 16 contiguous bytes: 16 sectors for the warp's 512,
// all used) besides its shared write, and a copy whose ignore-src
// predicate is set reads nothing.
func TestProfileCpAsyncSource(t *testing.T) {
	m := loadTestdata(t, "cpasync.ptx")
	p := NewProfile()
	d := NewDevice(Options{Observer: p})
	psrc := upload(t, d, make([]byte, 512))
	pout := upload(t, d, make([]byte, 32*32))
	if err := d.Launch(m, "cpasync", LaunchConfig{Grid: [3]int{1}, Block: [3]int{32}, Params: params{}.u64(psrc).u64(pout)}); err != nil {
		t.Fatal(err)
	}
	var first *InstrStats
	for _, s := range p.Stats() {
		if !strings.HasPrefix(s.Instr, "cp.async") || strings.Contains(s.Instr, "wait") || strings.Contains(s.Instr, "commit") {
			continue
		}
		if s.SharedRequests != 1 {
			t.Errorf("line %d %s: %d shared requests, want 1", s.Line, s.Instr, s.SharedRequests)
		}
		if s.Line == 65 && s.GlobalRequests != 0 { // the ignore-src copy
			t.Errorf("line %d %s: ignore-src copy made %d global requests, want 0", s.Line, s.Instr, s.GlobalRequests)
		}
		if first == nil || s.Line < first.Line {
			s := s
			first = &s
		}
	}
	if first == nil || first.GlobalRequests != 1 || first.GlobalSectors != 16 || first.GlobalBytes != 512 {
		t.Errorf("first cp.async: %+v, want 1 global request of 512 bytes in 16 sectors", first)
	}
}
