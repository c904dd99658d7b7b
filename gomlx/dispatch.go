package gomlx

// Kernel tables: for each kernel family, the generated kernel of each
// dtype. A missing entry means the family has no kernel for that dtype,
// which the builder reports when the node is recorded.

import (
	"github.com/gokern/kern"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

type ktable map[dtypes.DType]*kern.Kernel

var (
	copyK = ktable{
		dtypes.Float32: copyF32Kernel.Kernel(), dtypes.Float16: copyF16Kernel.Kernel(),
		dtypes.BFloat16: copyBF16Kernel.Kernel(), dtypes.Int32: copyI32Kernel.Kernel(),
		dtypes.Int64: copyI64Kernel.Kernel(), dtypes.Bool: copyBoolKernel.Kernel(),
		dtypes.Float64: copyF64Kernel.Kernel(),
		dtypes.Uint32:  copyU32Kernel.Kernel(), dtypes.Uint64: copyU64Kernel.Kernel(),
	}
	fillK = ktable{
		dtypes.Float32: fillF32Kernel.Kernel(), dtypes.Float16: fillF16Kernel.Kernel(),
		dtypes.BFloat16: fillBF16Kernel.Kernel(), dtypes.Int32: fillI32Kernel.Kernel(),
		dtypes.Int64: fillI64Kernel.Kernel(), dtypes.Bool: fillBoolKernel.Kernel(),
		dtypes.Float64: fillF64Kernel.Kernel(),
	}
	whereK = ktable{
		dtypes.Float32: whereF32Kernel.Kernel(), dtypes.Float16: whereF16Kernel.Kernel(),
		dtypes.BFloat16: whereBF16Kernel.Kernel(), dtypes.Int32: whereI32Kernel.Kernel(),
		dtypes.Int64: whereI64Kernel.Kernel(), dtypes.Bool: whereBoolKernel.Kernel(),
		dtypes.Float64: whereF64Kernel.Kernel(),
	}
	gatherK = ktable{
		dtypes.Float32: gatherF32Kernel.Kernel(), dtypes.Float16: gatherF16Kernel.Kernel(),
		dtypes.BFloat16: gatherBF16Kernel.Kernel(), dtypes.Int32: gatherI32Kernel.Kernel(),
		dtypes.Int64: gatherI64Kernel.Kernel(), dtypes.Bool: gatherBoolKernel.Kernel(),
		dtypes.Float64: gatherF64Kernel.Kernel(),
	}
	// Float families.
	unaryK = ktable{
		dtypes.Float32: unaryF32Kernel.Kernel(), dtypes.Float16: unaryF16Kernel.Kernel(),
		dtypes.BFloat16: unaryBF16Kernel.Kernel(), dtypes.Int32: unaryI32Kernel.Kernel(),
		dtypes.Int64:   unaryI64Kernel.Kernel(),
		dtypes.Float64: unaryF64Kernel.Kernel(),
	}
	isPredK = ktable{
		dtypes.Float32: isPredF32Kernel.Kernel(), dtypes.Float16: isPredF16Kernel.Kernel(),
		dtypes.BFloat16: isPredBF16Kernel.Kernel(),
		dtypes.Float64:  isPredF64Kernel.Kernel(),
	}
	binaryK = ktable{
		dtypes.Float32: binaryF32Kernel.Kernel(), dtypes.Float16: binaryF16Kernel.Kernel(),
		dtypes.BFloat16: binaryBF16Kernel.Kernel(), dtypes.Int32: binaryI32Kernel.Kernel(),
		dtypes.Int64: binaryI64Kernel.Kernel(), dtypes.Bool: logicalKernel.Kernel(),
		dtypes.Float64: binaryF64Kernel.Kernel(),
	}
	compareK = ktable{
		dtypes.Float32: compareF32Kernel.Kernel(), dtypes.Float16: compareF16Kernel.Kernel(),
		dtypes.BFloat16: compareBF16Kernel.Kernel(), dtypes.Int32: compareI32Kernel.Kernel(),
		dtypes.Int64:   compareI64Kernel.Kernel(),
		dtypes.Float64: compareF64Kernel.Kernel(),
	}
	reduceK = ktable{
		dtypes.Float32: reduceF32Kernel.Kernel(), dtypes.Float16: reduceF16Kernel.Kernel(),
		dtypes.BFloat16: reduceBF16Kernel.Kernel(), dtypes.Int32: reduceI32Kernel.Kernel(),
		dtypes.Int64: reduceI64Kernel.Kernel(), dtypes.Bool: reduceBKernel.Kernel(),
		dtypes.Float64: reduceF64Kernel.Kernel(),
	}
	argRowsK = ktable{
		dtypes.Float32: argRowsF32Kernel.Kernel(), dtypes.Float16: argRowsF16Kernel.Kernel(),
		dtypes.BFloat16: argRowsBF16Kernel.Kernel(),
		dtypes.Float64:  argRowsF64Kernel.Kernel(),
		dtypes.Int32:    argRowsI32Kernel.Kernel(),
		dtypes.Int64:    argRowsI64Kernel.Kernel(),
	}
	matmulK = ktable{
		dtypes.Float32: matmulF32Kernel.Kernel(), dtypes.Float16: matmulF16Kernel.Kernel(),
		dtypes.BFloat16: matmulBF16Kernel.Kernel(),
		dtypes.Float64:  matmulF64Kernel.Kernel(),
		dtypes.Int32:    matmulI32Kernel.Kernel(),
		dtypes.Int64:    matmulI64Kernel.Kernel(),
	}
	iotaK = ktable{
		dtypes.Float32: iotaF32Kernel.Kernel(), dtypes.Float16: iotaF16Kernel.Kernel(),
		dtypes.BFloat16: iotaBF16Kernel.Kernel(), dtypes.Int32: iotaI32Kernel.Kernel(),
		dtypes.Int64:   iotaI64Kernel.Kernel(),
		dtypes.Float64: iotaF64Kernel.Kernel(),
	}
	// matmulTileK is v2 of the batched matmul (kernels_matmul.go).
	matmulTileK = ktable{
		dtypes.Float32: matmulTileF32Kernel.Kernel(), dtypes.Float16: matmulTileF16Kernel.Kernel(),
		dtypes.BFloat16: matmulTileBF16Kernel.Kernel(), dtypes.Float64: matmulTileF64Kernel.Kernel(),
	}
	// sumBlockK is v2 of row sums (kernels_reduce.go).
	sumBlockK = ktable{
		dtypes.Float32: sumRowBlockF32Kernel.Kernel(), dtypes.Float16: sumRowBlockF16Kernel.Kernel(),
		dtypes.BFloat16: sumRowBlockBF16Kernel.Kernel(), dtypes.Float64: sumRowBlockF64Kernel.Kernel(),
	}
	// toF32K and fromF32K convert through the float32 hub; directK holds
	// the pairs that convert without it.
	toF32K = ktable{
		dtypes.Float16: cvtF16F32Kernel.Kernel(), dtypes.BFloat16: cvtBF16F32Kernel.Kernel(),
		dtypes.Int32: cvtI32F32Kernel.Kernel(), dtypes.Int64: cvtI64F32Kernel.Kernel(),
		dtypes.Bool:    cvtBoolF32Kernel.Kernel(),
		dtypes.Float64: cvtF64F32Kernel.Kernel(),
	}
	fromF32K = ktable{
		dtypes.Float16: cvtF32F16Kernel.Kernel(), dtypes.BFloat16: cvtF32BF16Kernel.Kernel(),
		dtypes.Int32: cvtF32I32Kernel.Kernel(), dtypes.Int64: cvtF32I64Kernel.Kernel(),
		dtypes.Bool:    cvtF32BoolKernel.Kernel(),
		dtypes.Float64: cvtF32F64Kernel.Kernel(),
	}
	directK = map[[2]dtypes.DType]*kern.Kernel{
		{dtypes.Int32, dtypes.Int64}:    cvtI32I64Kernel.Kernel(),
		{dtypes.Int64, dtypes.Int32}:    cvtI64I32Kernel.Kernel(),
		{dtypes.Bool, dtypes.Int32}:     cvtBoolI32Kernel.Kernel(),
		{dtypes.Bool, dtypes.Int64}:     cvtBoolI64Kernel.Kernel(),
		{dtypes.Int32, dtypes.Bool}:     cvtI32BoolKernel.Kernel(),
		{dtypes.Int64, dtypes.Bool}:     cvtI64BoolKernel.Kernel(),
		{dtypes.Float64, dtypes.Int32}:  cvtF64I32Kernel.Kernel(),
		{dtypes.Int32, dtypes.Float64}:  cvtI32F64Kernel.Kernel(),
		{dtypes.Float64, dtypes.Int64}:  cvtF64I64Kernel.Kernel(),
		{dtypes.Int64, dtypes.Float64}:  cvtI64F64Kernel.Kernel(),
		{dtypes.Float64, dtypes.Bool}:   cvtF64BoolKernel.Kernel(),
		{dtypes.Bool, dtypes.Float64}:   cvtBoolF64Kernel.Kernel(),
		{dtypes.Uint32, dtypes.Float32}: cvtU32F32Kernel.Kernel(),
		{dtypes.Uint64, dtypes.Float64}: cvtU64F64Kernel.Kernel(),
	}
)
