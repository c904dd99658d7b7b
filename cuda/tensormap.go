package cuda

// Tensor maps for the Tensor Memory Accelerator (CUDA driver API,
// cuTensorMapEncodeTiled, CUDA 12.0+): the 128-byte descriptor a
// cp.async.bulk.tensor instruction reads. Its contents are opaque; the
// driver validates the shape and writes it.

import "unsafe"

// TensorMap is a CUtensorMap: 128 bytes, 64-byte aligned when it is
// copied to device memory or passed as a kernel parameter.
type TensorMap [16]uint64

// TensorDataType is a CUtensorMapDataType.
type TensorDataType int32

const (
	TensorUint8    TensorDataType = 0
	TensorUint16   TensorDataType = 1
	TensorUint32   TensorDataType = 2
	TensorInt32    TensorDataType = 3
	TensorUint64   TensorDataType = 4
	TensorInt64    TensorDataType = 5
	TensorFloat16  TensorDataType = 6
	TensorFloat32  TensorDataType = 7
	TensorFloat64  TensorDataType = 8
	TensorBFloat16 TensorDataType = 9
)

// TensorSwizzle is a CUtensorMapSwizzle: none, 32, 64 or 128 bytes.
type TensorSwizzle int32

const (
	TensorSwizzleNone TensorSwizzle = 0
	TensorSwizzle32B  TensorSwizzle = 1
	TensorSwizzle64B  TensorSwizzle = 2
	TensorSwizzle128B TensorSwizzle = 3
)

// EncodeTensorMapTiled describes a tensor in global memory at addr for
// tiled TMA copies: dims are the sizes, fastest dimension first; strides
// the byte strides of dimensions 1.. (len(dims)-1 of them); box the tile
// a copy moves. Element strides are 1, no interleave, L2 promotion of
// 128 bytes, out-of-bounds elements zero. The driver refuses shapes the
// hardware cannot copy (CUDA_ERROR_INVALID_VALUE): a base or stride not
// a multiple of 16 bytes, a box over 256 or whose row is not a multiple of
// 16 bytes or is wider than the swizzle.
func EncodeTensorMapTiled(dt TensorDataType, addr DevicePtr, dims, strides []uint64, box []uint32, sw TensorSwizzle) (TensorMap, error) {
	var m TensorMap
	d := current()
	rank := len(dims)
	if rank < 1 || rank > 5 || len(strides) != rank-1 || len(box) != rank {
		return m, &Error{Call: "cuTensorMapEncodeTiled", Code: ErrorInvalidValue, Name: "CUDA_ERROR_INVALID_VALUE",
			Text: "dims, strides and box disagree on the rank (1..5)"}
	}
	estr := make([]uint32, rank)
	for i := range estr {
		estr[i] = 1
	}
	// The map must be 64-byte aligned: encode into an aligned buffer.
	var buf [16 + 8]uint64
	p := unsafe.Pointer(&buf[(8-int(uintptr(unsafe.Pointer(&buf[0]))/8%8))%8])
	var sp uintptr
	if rank > 1 {
		sp = uintptr(unsafe.Pointer(&strides[0]))
	}
	const l2Promotion128B = 2
	err := d.call(&d.cuTensorMapEncodeTiled, uintptr(p), uintptr(dt), uintptr(rank), uintptr(addr),
		uintptr(unsafe.Pointer(&dims[0])), sp, uintptr(unsafe.Pointer(&box[0])), uintptr(unsafe.Pointer(&estr[0])),
		0, uintptr(sw), l2Promotion128B, 0)
	if err != nil {
		return m, err
	}
	m = *(*TensorMap)(p)
	return m, nil
}
