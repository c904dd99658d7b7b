package gpu

// Tensor Memory Accelerator copies (cp.async.bulk.tensor, PTX ISA
// §9.7.9.25.5, sm_90): one thread asks the TMA unit to copy a 2-D box of a
// global tensor into shared memory (completing bytes on an mbarrier) or
// back. The tensor is described by a tensor map, 128 bytes in global
// memory (16 uint64, 64-byte aligned) that the host fills: on a GPU with
// the driver's cuTensorMapEncodeTiled, on the emulator and in native mode
// with EncodeTensorMap, whose layout only kern reads.
//
// A load writes the box row by row, box[0] elements per row, densely from
// dst, then applies the map's swizzle to the shared address (a 128-byte
// swizzled box must start 1024-byte aligned); elements outside the tensor
// read as zero. It counts box[0]·box[1]·elemBytes bytes on the mbarrier,
// which a MbarrierArriveExpectTx must announce for the phase.

import "fmt"

// TensorMapWords is the size of a tensor map in uint64 words (128 bytes).
const TensorMapWords = 16

const tensorMapMagic = 0x50414d544e52454b // "KERNTMAP"

// TensorMap2D describes a row-major 2-D tensor for TMA: dims[0] elements
// per row (the contiguous dimension), dims[1] rows, rowBytes between rows,
// box the tile copied, swizzle its shared-memory layout.
type TensorMap2D struct {
	Base      uintptr // device (emulator) address or, in native mode, the address of heap memory (a Buffer's), which must stay alive
	ElemBytes int     // 1, 2, 4 or 8
	Dims      [2]int
	RowBytes  int
	Box       [2]int
	Swizzle   Swizzle
}

// EncodeTensorMap checks m against the hardware's rules (cuTensorMapEncodeTiled
// in the CUDA driver API) and packs it in kern's layout for the emulator
// and native mode.
func EncodeTensorMap(m TensorMap2D) ([TensorMapWords]uint64, error) {
	var out [TensorMapWords]uint64
	switch {
	case m.ElemBytes != 1 && m.ElemBytes != 2 && m.ElemBytes != 4 && m.ElemBytes != 8:
		return out, fmt.Errorf("tensor map: element size %d is not 1, 2, 4 or 8 bytes", m.ElemBytes)
	case m.Base%16 != 0:
		return out, fmt.Errorf("tensor map: base address %#x is not 16-byte aligned", m.Base)
	case m.Dims[0] < 1 || m.Dims[1] < 1 || m.Dims[0] > 1<<32 || m.Dims[1] > 1<<32:
		return out, fmt.Errorf("tensor map: dimensions %v are not in 1..2^32", m.Dims)
	case m.RowBytes%16 != 0 || m.RowBytes < m.Dims[0]*m.ElemBytes || m.RowBytes >= 1<<40:
		return out, fmt.Errorf("tensor map: row stride %d bytes is not a multiple of 16 at least a row (%d bytes) and below 2^40", m.RowBytes, m.Dims[0]*m.ElemBytes)
	case m.Box[0] < 1 || m.Box[1] < 1 || m.Box[0] > 256 || m.Box[1] > 256:
		return out, fmt.Errorf("tensor map: box %v is not in 1..256 per dimension", m.Box)
	case m.Box[0]*m.ElemBytes%16 != 0:
		return out, fmt.Errorf("tensor map: a box row of %d bytes is not a multiple of 16", m.Box[0]*m.ElemBytes)
	case m.Swizzle != SwizzleNone && m.Box[0]*m.ElemBytes > m.Swizzle.Bytes():
		return out, fmt.Errorf("tensor map: a box row of %d bytes is wider than the %d-byte swizzle", m.Box[0]*m.ElemBytes, m.Swizzle.Bytes())
	case m.Swizzle < SwizzleNone || m.Swizzle > Swizzle128B:
		return out, fmt.Errorf("tensor map: unknown swizzle %d", m.Swizzle)
	}
	out[0] = tensorMapMagic
	out[1] = uint64(m.Base)
	out[2] = uint64(m.ElemBytes) | uint64(m.Swizzle)<<8
	out[3], out[4] = uint64(m.Dims[0]), uint64(m.Dims[1])
	out[5] = uint64(m.RowBytes)
	out[6] = uint64(m.Box[0]) | uint64(m.Box[1])<<32
	return out, nil
}

// DecodeTensorMap is the inverse of EncodeTensorMap (the emulator and
// native mode read maps with it).
func DecodeTensorMap(w []uint64) (TensorMap2D, error) {
	if len(w) < TensorMapWords || w[0] != tensorMapMagic {
		return TensorMap2D{}, fmt.Errorf("not a tensor map made by gpu.EncodeTensorMap")
	}
	return TensorMap2D{Base: uintptr(w[1]), ElemBytes: int(w[2] & 0xff), Swizzle: Swizzle(w[2] >> 8 & 3),
		Dims: [2]int{int(w[3]), int(w[4])}, RowBytes: int(w[5]), Box: [2]int{int(w[6] & 0xffffffff), int(w[6] >> 32)}}, nil
}

// BoxBytes is the bytes one copy moves (and completes on the mbarrier).
func (m TensorMap2D) BoxBytes() int { return m.Box[0] * m.Box[1] * m.ElemBytes }

// TMALoad2D copies the box at element coordinates (x, y) (x along the
// contiguous dimension) of the tensor described by the map at tmap into
// shared memory at dst, and completes its bytes on the mbarrier bar
// (cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes,
// PTX ISA §9.7.9.25.5.1). One thread issues it.
func TMALoad2D[T Elem](t Thread, dst *T, tmap *uint64, x, y int, bar *uint64) {
	tmaLoad2D(t.th, dst, tmap, x, y, bar)
}
