package gpu

// TMA in native mode: the copy happens inside TMALoad2D, then its bytes
// complete on the mbarrier, so a waiter's phase completes exactly as on a
// GPU; reading the box before waiting works here (the emulator is the
// tool that catches it). The map's base is a Go address (the native
// Buffer's memory, kept alive by the caller); swizzling applies to the
// block's virtual shared addresses (native_wgmma.go).

import (
	"fmt"
	"unsafe"
)

func tmaLoad2D[T Elem](th *thread, dst *T, tmap *uint64, x, y int, bar *uint64) {
	words := unsafe.Slice(tmap, TensorMapWords)
	m, err := DecodeTensorMap(words)
	if err != nil {
		panic("gpu.TMALoad2D: " + err.Error())
	}
	base := *(*unsafe.Pointer)(unsafe.Pointer(&words[1]))
	sh := &th.blk.shared
	v, ok := sh.virtOf(unsafe.Pointer(dst))
	if !ok || v%128 != 0 {
		panic(fmt.Sprintf("gpu.TMALoad2D: destination %p is not a 128-byte aligned address of this block's shared memory", dst))
	}
	if m.Swizzle != SwizzleNone && v%(8*m.Swizzle.Bytes()) != 0 {
		panic(fmt.Sprintf("gpu.TMALoad2D: a %d-byte swizzled box must start %d-byte aligned", m.Swizzle.Bytes(), 8*m.Swizzle.Bytes()))
	}
	eb := m.ElemBytes
	for r := range m.Box[1] {
		for c := range m.Box[0] {
			off := v + (r*m.Box[0]+c)*eb
			if m.Swizzle != SwizzleNone {
				off = SwizzleAddr(off, m.Swizzle.Bytes())
			}
			out, ok := sh.virtBytes(off, eb)
			if !ok {
				panic(fmt.Sprintf("gpu.TMALoad2D: the box does not fit in shared memory at %p", dst))
			}
			gx, gy := x+c, y+r
			if gx < 0 || gy < 0 || gx >= m.Dims[0] || gy >= m.Dims[1] {
				clear(out)
				continue
			}
			copy(out, unsafe.Slice((*byte)(unsafe.Add(base, gy*m.RowBytes+gx*eb)), eb))
		}
	}
	mbarrierUpdate(th, bar, "TMALoad2D", 0, -m.BoxBytes())
}
