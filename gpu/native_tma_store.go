package gpu

// TMA stores in native mode: the copy happens inside TMAStore2D (the
// waits are no-ops). The map's base is a Go address (the native Buffer's
// memory); the box's shared addresses are swizzled like a load's.

import (
	"fmt"
	"unsafe"
)

func tmaStore2D[T Elem](th *thread, tmap *uint64, x, y int, src *T) {
	words := unsafe.Slice(tmap, TensorMapWords)
	m, err := DecodeTensorMap(words)
	if err != nil {
		panic("gpu.TMAStore2D: " + err.Error())
	}
	base := *(*unsafe.Pointer)(unsafe.Pointer(&words[1]))
	sh := &th.blk.shared
	v, ok := sh.virtOf(unsafe.Pointer(src))
	if !ok || v%128 != 0 {
		panic(fmt.Sprintf("gpu.TMAStore2D: source %p is not a 128-byte aligned address of this block's shared memory", src))
	}
	if m.Swizzle != SwizzleNone && v%(8*m.Swizzle.Bytes()) != 0 {
		panic(fmt.Sprintf("gpu.TMAStore2D: a %d-byte swizzled box must start %d-byte aligned", m.Swizzle.Bytes(), 8*m.Swizzle.Bytes()))
	}
	eb := m.ElemBytes
	for r := range m.Box[1] {
		for c := range m.Box[0] {
			gx, gy := x+c, y+r
			if gx < 0 || gy < 0 || gx >= m.Dims[0] || gy >= m.Dims[1] {
				continue
			}
			off := v + (r*m.Box[0]+c)*eb
			if m.Swizzle != SwizzleNone {
				off = SwizzleAddr(off, m.Swizzle.Bytes())
			}
			in, ok := sh.virtBytes(off, eb)
			if !ok {
				panic(fmt.Sprintf("gpu.TMAStore2D: the box does not fit in shared memory at %p", src))
			}
			copy(unsafe.Slice((*byte)(unsafe.Add(base, gy*m.RowBytes+gx*eb)), eb), in)
		}
	}
}
