package cublas

import (
	"math"
	"unsafe"

	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
)

// GEMM: C = alpha·op(A)·op(B) + beta·C, column-major (see the package doc
// for row-major data).
//
// Shapes: op(A) is m×k, op(B) is k×n, C is m×n. A is stored m×k (lda ≥ m)
// when transA is OpN and k×m (lda ≥ k) otherwise; B is k×n (ldb ≥ k) or
// n×k (ldb ≥ n); ldc ≥ m. Element (i, j) of a stored matrix X is at
// X + (i + j*ldX)*size. All pointers are device memory of the handle's
// context. The call returns when the work is queued on the handle's
// stream.

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in float32
// (cublasSgemm_v2). Under TF32TensorOpMath cuBLAS may round the inputs
// to TF32.
func (h *Handle) Sgemm(transA, transB Operation, m, n, k int, alpha float32, a cuda.DevicePtr, lda int,
	b cuda.DevicePtr, ldb int, beta float32, c cuda.DevicePtr, ldc int) error {
	l := h.lib
	p := &l.cublasSgemm
	ints, err := cInts(p.Name, [6]string{"m", "n", "k", "lda", "ldb", "ldc"}, [6]int{m, n, k, lda, ldb, ldc})
	if err != nil {
		return err
	}
	scal := [2]float32{alpha, beta}
	return h.do(p, func() error {
		return l.call(p, h.h, uintptr(uint32(transA)), uintptr(uint32(transB)), ints[0], ints[1], ints[2],
			uintptr(unsafe.Pointer(&scal[0])), uintptr(a), ints[3], uintptr(b), ints[4],
			uintptr(unsafe.Pointer(&scal[1])), uintptr(c), ints[5])
	})
}

// SgemmRowMajor computes C = alpha·A·B + beta·C for row-major float32
// matrices A (m×k), B (k×n) and C (m×n), densely packed. It is Sgemm on
// the transposes with the operands swapped: a row-major r×c matrix is
// the column-major c×r matrix of its transpose, and (A·B)ᵀ = Bᵀ·Aᵀ.
func (h *Handle) SgemmRowMajor(m, n, k int, alpha float32, a, b cuda.DevicePtr, beta float32, c cuda.DevicePtr) error {
	return h.Sgemm(OpN, OpN, n, m, k, alpha, b, n, a, k, beta, c, n)
}

// GemmEx is GEMM with the element types and the compute type stated
// (cublasGemmEx): for example Float16 or BFloat16 A and B, Float32 or the
// same 16-bit type for C, and Compute32F to multiply and accumulate in
// float32. alpha and beta are passed in the compute type's scalar type
// (half for Compute16F, double for Compute64F, int32 for Compute32I,
// float otherwise). algo is GemmDefaultTensorOp or GemmDefault; both let
// cuBLAS pick tensor cores where the types allow.
func (h *Handle) GemmEx(transA, transB Operation, m, n, k int, alpha float32,
	a cuda.DevicePtr, aType DataType, lda int, b cuda.DevicePtr, bType DataType, ldb int,
	beta float32, c cuda.DevicePtr, cType DataType, ldc int, compute ComputeType, algo GemmAlgo) error {
	l := h.lib
	p := &l.cublasGemmEx
	ints, err := cInts(p.Name, [6]string{"m", "n", "k", "lda", "ldb", "ldc"}, [6]int{m, n, k, lda, ldb, ldc})
	if err != nil {
		return err
	}
	// Each scalar sits at the start of an 8-byte word; on the
	// little-endian targets cuBLAS runs on that is where a 2- or 4-byte
	// value's bytes begin.
	scal := [2]uint64{scalarBits(compute, alpha), scalarBits(compute, beta)}
	return h.do(p, func() error {
		return l.call(p, h.h, uintptr(uint32(transA)), uintptr(uint32(transB)), ints[0], ints[1], ints[2],
			uintptr(unsafe.Pointer(&scal[0])),
			uintptr(a), uintptr(uint32(aType)), ints[3],
			uintptr(b), uintptr(uint32(bType)), ints[4],
			uintptr(unsafe.Pointer(&scal[1])),
			uintptr(c), uintptr(uint32(cType)), ints[5],
			uintptr(uint32(compute)), uintptr(int64(algo)))
	})
}

// scalarBits encodes v as the scalar type of compute.
func scalarBits(compute ComputeType, v float32) uint64 {
	switch compute {
	case Compute16F, Compute16FPedantic:
		return uint64(gpu.ToHalf(v))
	case Compute64F, Compute64FPedantic:
		return math.Float64bits(float64(v))
	case Compute32I, Compute32IPedantic:
		return uint64(uint32(int32(math.Round(float64(v)))))
	}
	return uint64(math.Float32bits(v))
}

// cInts converts a call's int arguments to C ints.
func cInts(call string, names [6]string, vs [6]int) ([6]uintptr, error) {
	var out [6]uintptr
	for i, v := range vs {
		c, err := cInt(call, names[i], v)
		if err != nil {
			return out, err
		}
		out[i] = c
	}
	return out, nil
}
