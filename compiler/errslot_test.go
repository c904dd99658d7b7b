package compiler

// The error slot as the failure handler writes it (compiler.ErrorSlot's
// layout), read back from the emulator.

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

// slotRecord is a decoded error slot; code 0 means no check failed.
type slotRecord struct {
	code          uint32
	site          int // the site index, -1 for none
	index, length uint64
	thread, block [3]uint32
}

// readSlot reads module m's error slot on dev.
func readSlot(t *testing.T, dev *emu.Device, m *emu.Module) slotRecord {
	t.Helper()
	slot, size, err := dev.Global(m, ErrorSlot)
	if err != nil {
		t.Fatal(err)
	}
	if size != ErrorSlotBytes {
		t.Fatalf("error slot of %d bytes, want %d", size, ErrorSlotBytes)
	}
	raw := make([]byte, ErrorSlotBytes)
	if err := dev.Read(slot, raw); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	block := le.Uint64(raw[slotBlock:])
	r := slotRecord{
		code:   le.Uint32(raw[slotCode:]),
		index:  le.Uint64(raw[slotIndex:]),
		length: le.Uint64(raw[slotIndex+8:]),
		thread: [3]uint32{le.Uint32(raw[slotThread:]), le.Uint32(raw[slotThread+4:]), le.Uint32(raw[slotThread+8:])},
		block:  [3]uint32{uint32(block), uint32(block >> 32 & 0xffff), uint32(block >> 48)},
	}
	r.site = int(r.code&maxSiteCode) - 1
	return r
}

// A failing check in a 3-D launch (the host's decoding of a block x past
// 2^16 is tested on the stub driver, cudafault_test.go) records the first failing thread's
// site, index, length, thread and block at the offsets ErrorSlot names:
// one thread of one block fails, so the record is deterministic.
func TestErrorSlotRecordsTheFailingThread(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(`package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=4x3x2
func K(t gpu.Thread, x []int32, bad int) {
	i := 0
	th, b := t.ThreadIdx(), t.BlockIdx()
	if th.X == 3 && th.Y == 2 && th.Z == 1 && b.X == 2 && b.Y == 2 && b.Z == 1 {
		i = bad
	}
	x[i] = 1
}
`))
	if err != nil {
		t.Fatal(err)
	}
	dev := emu.NewDevice(emu.Options{})
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	x, _ := dev.Alloc(4 * 5)
	params := make([]byte, 24)
	binary.LittleEndian.PutUint64(params[0:], x)
	binary.LittleEndian.PutUint64(params[8:], 5)
	binary.LittleEndian.PutUint64(params[16:], 9)
	_ = dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{3, 3, 2}, Block: [3]int{4, 3, 2}, Params: params})
	r := readSlot(t, dev, m)
	want := slotRecord{code: 1<<16 | 1, site: 0, index: 9, length: 5, thread: [3]uint32{3, 2, 1}, block: [3]uint32{2, 2, 1}}
	if r != want {
		t.Errorf("slot %+v, want %+v", r, want)
	}
	if len(p.Kernels[0].Sites) != 1 {
		t.Errorf("sites %q, want the one store", p.Kernels[0].Sites)
	}
}

// Under a block= directive of extent 1 in y (and z), the handler does not
// read %tid.y (%tid.z): launch rejects larger blocks, so those indices are
// 0, as the zeroed slot has them. The record is still complete, the grid
// 3-D.
func TestErrorSlotSkipsThreadDimensionsOfExtentOne(t *testing.T) {
	for _, tc := range []struct {
		block  string
		cond   string // which thread fails, in terms of th and tx, ty
		dims   [3]int
		thread [3]uint32
		reads  []string // special registers the PTX reads
		absent []string // and those it does not
	}{
		{"64", "th.X == tx", [3]int{64, 1, 1}, [3]uint32{37, 0, 0}, []string{"%tid.x"}, []string{"%tid.y", "%tid.z"}},
		{"8x4", "th.X == tx && th.Y == ty", [3]int{8, 4, 1}, [3]uint32{5, 3, 0}, []string{"%tid.x", "%tid.y"}, []string{"%tid.z"}},
	} {
		t.Run(tc.block, func(t *testing.T) {
			p, err := CompileSource(Config{}, "k.go", []byte(`package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=`+tc.block+`
func K(t gpu.Thread, x []int32, bad int, tx, ty int) {
	i := 0
	th, b := t.ThreadIdx(), t.BlockIdx()
	if `+tc.cond+` && b.X == 2 && b.Y == 1 && b.Z == 1 {
		i = bad
	}
	x[i] = 1
}
`))
			if err != nil {
				t.Fatal(err)
			}
			// The body reads %tid.y only in the 2-D kernel; the handler
			// follows the directive.
			for _, sr := range tc.reads {
				if !strings.Contains(p.PTX, sr) {
					t.Errorf("the PTX does not read %s", sr)
				}
			}
			for _, sr := range tc.absent {
				if strings.Contains(p.PTX, sr) {
					t.Errorf("the PTX reads %s under block=%s", sr, tc.block)
				}
			}
			dev := emu.NewDevice(emu.Options{})
			m, err := emu.Load([]byte(p.PTX))
			if err != nil {
				t.Fatal(err)
			}
			x, _ := dev.Alloc(4 * 5)
			params := make([]byte, 40)
			binary.LittleEndian.PutUint64(params[0:], x)
			binary.LittleEndian.PutUint64(params[8:], 5)
			binary.LittleEndian.PutUint64(params[16:], 1<<40)
			binary.LittleEndian.PutUint64(params[24:], uint64(tc.thread[0]))
			binary.LittleEndian.PutUint64(params[32:], uint64(tc.thread[1]))
			_ = dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{3, 2, 2}, Block: tc.dims, Params: params})
			r := readSlot(t, dev, m)
			want := slotRecord{code: 1<<16 | 1, site: 0, index: 1 << 40, length: 5, thread: tc.thread, block: [3]uint32{2, 1, 1}}
			if r != want {
				t.Errorf("slot %+v, want %+v", r, want)
			}
		})
	}
}
