package cublas

import "strconv"

// Operation says how a GEMM operand is used (cublasOperation_t).
type Operation int32

const (
	OpN Operation = 0 // as stored
	OpT Operation = 1 // transposed
	OpC Operation = 2 // conjugate-transposed (= OpT for real types)
)

func (o Operation) String() string {
	switch o {
	case OpN:
		return "CUBLAS_OP_N"
	case OpT:
		return "CUBLAS_OP_T"
	case OpC:
		return "CUBLAS_OP_C"
	}
	return "cublasOperation_t(" + strconv.Itoa(int(o)) + ")"
}

// DataType is the element type of a GemmEx operand (cudaDataType_t from
// library_types.h, shared by all CUDA libraries).
type DataType int32

const (
	Float32  DataType = 0  // CUDA_R_32F
	Float64  DataType = 1  // CUDA_R_64F
	Float16  DataType = 2  // CUDA_R_16F, IEEE half (gpu.Half)
	Int8     DataType = 3  // CUDA_R_8I
	Int32    DataType = 10 // CUDA_R_32I
	BFloat16 DataType = 14 // CUDA_R_16BF (gpu.BFloat16)
)

var dataTypeNames = map[DataType]string{
	Float32: "CUDA_R_32F", Float64: "CUDA_R_64F", Float16: "CUDA_R_16F",
	Int8: "CUDA_R_8I", Int32: "CUDA_R_32I", BFloat16: "CUDA_R_16BF",
}

func (t DataType) String() string {
	if n, ok := dataTypeNames[t]; ok {
		return n
	}
	return "cudaDataType_t(" + strconv.Itoa(int(t)) + ")"
}

// Size is the size of one element in bytes, or 0 for a type this package
// does not name.
func (t DataType) Size() int {
	switch t {
	case Int8:
		return 1
	case Float16, BFloat16:
		return 2
	case Float32, Int32:
		return 4
	case Float64:
		return 8
	}
	return 0
}

// ComputeType is the precision GemmEx multiplies and accumulates in
// (cublasComputeType_t, cuBLAS 11+). It also fixes the type of alpha and
// beta: half for Compute16F, double for Compute64F, int32 for Compute32I,
// float for the rest. The FAST variants allow cuBLAS to round float
// inputs to the named type to use tensor cores.
type ComputeType int32

const (
	Compute16F         ComputeType = 64
	Compute16FPedantic ComputeType = 65
	Compute32F         ComputeType = 68
	Compute32FPedantic ComputeType = 69
	Compute64F         ComputeType = 70
	Compute64FPedantic ComputeType = 71
	Compute32I         ComputeType = 72
	Compute32IPedantic ComputeType = 73
	Compute32FFast16F  ComputeType = 74
	Compute32FFast16BF ComputeType = 75
	Compute32FFastTF32 ComputeType = 77
)

var computeTypeNames = map[ComputeType]string{
	Compute16F: "CUBLAS_COMPUTE_16F", Compute16FPedantic: "CUBLAS_COMPUTE_16F_PEDANTIC",
	Compute32F: "CUBLAS_COMPUTE_32F", Compute32FPedantic: "CUBLAS_COMPUTE_32F_PEDANTIC",
	Compute64F: "CUBLAS_COMPUTE_64F", Compute64FPedantic: "CUBLAS_COMPUTE_64F_PEDANTIC",
	Compute32I: "CUBLAS_COMPUTE_32I", Compute32IPedantic: "CUBLAS_COMPUTE_32I_PEDANTIC",
	Compute32FFast16F: "CUBLAS_COMPUTE_32F_FAST_16F", Compute32FFast16BF: "CUBLAS_COMPUTE_32F_FAST_16BF",
	Compute32FFastTF32: "CUBLAS_COMPUTE_32F_FAST_TF32",
}

func (c ComputeType) String() string {
	if n, ok := computeTypeNames[c]; ok {
		return n
	}
	return "cublasComputeType_t(" + strconv.Itoa(int(c)) + ")"
}

// GemmAlgo picks GemmEx's algorithm (cublasGemmAlgo_t). Since CUDA 11
// cuBLAS chooses tensor cores by itself whenever the types allow, and the
// explicit algorithm numbers are ignored on sm_80 and later; the two
// defaults are all this package names.
type GemmAlgo int32

const (
	GemmDefault         GemmAlgo = -1 // CUBLAS_GEMM_DEFAULT
	GemmDefaultTensorOp GemmAlgo = 99 // CUBLAS_GEMM_DEFAULT_TENSOR_OP
)

func (a GemmAlgo) String() string {
	switch a {
	case GemmDefault:
		return "CUBLAS_GEMM_DEFAULT"
	case GemmDefaultTensorOp:
		return "CUBLAS_GEMM_DEFAULT_TENSOR_OP"
	}
	return "cublasGemmAlgo_t(" + strconv.Itoa(int(a)) + ")"
}

// MathMode is a handle's math mode (cublasMath_t): whether the
// float routines (Sgemm) may use reduced-precision tensor cores.
type MathMode int32

const (
	DefaultMath      MathMode = 0 // full float32 for Sgemm
	TensorOpMath     MathMode = 1 // deprecated since CUDA 11; same as DefaultMath
	PedanticMath     MathMode = 2 // the compute type exactly as stated, no tensor cores
	TF32TensorOpMath MathMode = 3 // Sgemm may round inputs to TF32 (10-bit mantissa)
	// DisallowReducedPrecisionReduction is OR'ed into a mode: 16-bit
	// GEMMs then never accumulate in reduced precision.
	DisallowReducedPrecisionReduction MathMode = 16
)
