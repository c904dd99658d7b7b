package cuda

import (
	"bytes"
	"testing"
	"unsafe"
)

func TestArgsLayout(t *testing.T) {
	a := new(Args)
	a.Uint8(1).Bytes([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}).Int16(-1).Bytes(nil)
	if a.Len() != 4 {
		t.Fatalf("Len = %d", a.Len())
	}
	// Each value starts on its own 8-byte word; a 12-byte value takes two.
	words, off, size, _ := a.views()
	if got := [4]uint32{off[0], off[1], off[2], off[3]}; got != [4]uint32{0, 1, 3, 4} {
		t.Errorf("word offsets = %v", got)
	}
	if got := [4]uint32{size[0], size[1], size[2], size[3]}; got != [4]uint32{1, 12, 2, 0} {
		t.Errorf("sizes = %v", got)
	}
	if a.nw != 5 || words[4] != 0 {
		t.Errorf("words in use = %d", a.nw)
	}
	if v := a.Value(2); !bytes.Equal(v, []byte{0xff, 0xff}) {
		t.Errorf("Value(2) = % x", v)
	}
	if a.Value(4) != nil || a.Value(-1) != nil {
		t.Errorf("Value out of range is not nil")
	}
	if s := a.String(); s != "[1B:0x01, 12B:0x0c0b0a090807060504030201, 2B:0xffff, 0B:0x]" {
		t.Errorf("String() = %s", s)
	}
	// pointers() points each entry at its value.
	_, _, _, ptrs := a.views()
	if got := a.pointers(); got != uintptr(unsafe.Pointer(&ptrs[0])) {
		t.Errorf("pointers() = %#x, not the pointer array", got)
	}
	base := uintptr(unsafe.Pointer(&words[0]))
	for i, p := range ptrs[:a.Len()] {
		if p != base+uintptr(off[i])*8 {
			t.Errorf("pointer %d = %#x, want base+%d words", i, p, off[i])
		}
	}
	// Reset zeroes the words so the next narrow value has no stale high bytes.
	a.Reset().Uint8(7)
	if a.Len() != 1 || words[0] != 7 || words[1] != 0 {
		t.Errorf("after Reset: len %d words %x", a.Len(), words[:2])
	}
}

func TestArgsSpill(t *testing.T) {
	a := new(Args)
	for i := range 100 {
		a.Uint32(uint32(i))
	}
	if a.spill == nil || a.Len() != 100 {
		t.Fatalf("100 params did not move to the heap store (len %d)", a.Len())
	}
	for i := range 100 {
		if v := a.Value(i); !bytes.Equal(v, le32(uint32(i))) {
			t.Fatalf("param %d = % x", i, v)
		}
	}
	spill := a.spill
	a.Reset().Uint64(1)
	if a.spill != spill || !bytes.Equal(a.Value(0), le64(1)) {
		t.Errorf("Reset dropped the grown store or kept stale data")
	}
	// A value too big for the inline words spills too.
	b := new(Args).Bytes(make([]byte, 8*inlineWords+1))
	if b.spill == nil || len(b.Value(0)) != 8*inlineWords+1 {
		t.Errorf("large Bytes value not stored")
	}
}
