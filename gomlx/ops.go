package gomlx

// The ops the backend implements (its Capabilities), and those of
// GoMLX's simplego backend, which the not-implemented error names; a
// test checks both lists against the code and against simplego.

import "github.com/gomlx/gomlx/backends"

var supportedOps = []backends.OpType{
	backends.OpTypeParameter, backends.OpTypeConstant, backends.OpTypeIdentity,
	// Element-wise unary.
	backends.OpTypeNeg, backends.OpTypeAbs, backends.OpTypeExp, backends.OpTypeLog, backends.OpTypeSqrt,
	backends.OpTypeRsqrt, backends.OpTypeTanh, backends.OpTypeLogistic, backends.OpTypeSin, backends.OpTypeCos,
	backends.OpTypeErf, backends.OpTypeFloor, backends.OpTypeCeil, backends.OpTypeRound, backends.OpTypeSign,
	backends.OpTypeLogicalNot, backends.OpTypeBitwiseNot, backends.OpTypeIsFinite, backends.OpTypeIsNaN,
	// Element-wise binary.
	backends.OpTypeAdd, backends.OpTypeSub, backends.OpTypeMul, backends.OpTypeDiv, backends.OpTypeMax,
	backends.OpTypeMin, backends.OpTypePow, backends.OpTypeRem, backends.OpTypeBitwiseAnd, backends.OpTypeBitwiseOr,
	backends.OpTypeBitwiseXor, backends.OpTypeLogicalAnd, backends.OpTypeLogicalOr, backends.OpTypeLogicalXor,
	backends.OpTypeClamp,
	// Comparisons.
	backends.OpTypeEqual, backends.OpTypeNotEqual, backends.OpTypeLessThan, backends.OpTypeLessOrEqual,
	backends.OpTypeGreaterThan, backends.OpTypeGreaterOrEqual,
	// Selection, conversion, generation.
	backends.OpTypeWhere, backends.OpTypeConvertDType, backends.OpTypeIota, backends.OpTypeRNGBitGenerator,
	// Shape.
	backends.OpTypeReshape, backends.OpTypeTranspose, backends.OpTypeBroadcastInDim, backends.OpTypeSlice,
	backends.OpTypeReverse, backends.OpTypeConcatenate, backends.OpTypePad, backends.OpTypeGather,
	backends.OpTypeScatterSum, backends.OpTypeDynamicSlice, backends.OpTypeDynamicUpdateSlice,
	// Reductions.
	backends.OpTypeReduceSum, backends.OpTypeReduceProduct, backends.OpTypeReduceMax, backends.OpTypeReduceMin,
	backends.OpTypeReduceLogicalAnd, backends.OpTypeReduceLogicalOr, backends.OpTypeReduceLogicalXor,
	backends.OpTypeArgMinMax,
	// Contractions.
	backends.OpTypeDotGeneral, backends.OpTypeDot,
}

// simplegoOps are the ops GoMLX v0.26.0's simplego ("go") backend
// implements (TestSimplegoOps keeps the list in step).
var simplegoOps = []backends.OpType{
	backends.OpTypeAbs, backends.OpTypeAdd, backends.OpTypeArgMinMax, backends.OpTypeBitCount,
	backends.OpTypeBitwiseAnd, backends.OpTypeBitwiseNot, backends.OpTypeBitwiseOr, backends.OpTypeBitwiseXor,
	backends.OpTypeBroadcast, backends.OpTypeBroadcastInDim, backends.OpTypeCeil, backends.OpTypeClz,
	backends.OpTypeConcatenate, backends.OpTypeConstant, backends.OpTypeConvGeneral,
	backends.OpTypeConvertDType, backends.OpTypeCos, backends.OpTypeDiv, backends.OpTypeDot,
	backends.OpTypeDotGeneral, backends.OpTypeEqual, backends.OpTypeErf, backends.OpTypeExp,
	backends.OpTypeExpm1, backends.OpTypeFloor, backends.OpTypeGather, backends.OpTypeGreaterOrEqual,
	backends.OpTypeGreaterThan, backends.OpTypeIdentity, backends.OpTypeIota, backends.OpTypeIsFinite,
	backends.OpTypeIsNaN, backends.OpTypeLessOrEqual, backends.OpTypeLessThan, backends.OpTypeLog,
	backends.OpTypeLog1p, backends.OpTypeLogicalAnd, backends.OpTypeLogicalNot, backends.OpTypeLogicalOr,
	backends.OpTypeLogicalXor, backends.OpTypeLogistic, backends.OpTypeMax, backends.OpTypeMin,
	backends.OpTypeMul, backends.OpTypeNeg, backends.OpTypeNotEqual, backends.OpTypeParameter,
	backends.OpTypePow, backends.OpTypeRNGBitGenerator, backends.OpTypeReduceBitwiseAnd,
	backends.OpTypeReduceBitwiseOr, backends.OpTypeReduceBitwiseXor, backends.OpTypeReduceLogicalAnd,
	backends.OpTypeReduceLogicalOr, backends.OpTypeReduceLogicalXor, backends.OpTypeReduceMax,
	backends.OpTypeReduceMin, backends.OpTypeReduceProduct, backends.OpTypeReduceSum,
	backends.OpTypeReduceWindow, backends.OpTypeRem, backends.OpTypeReshape, backends.OpTypeRound,
	backends.OpTypeRsqrt, backends.OpTypeScatterMax, backends.OpTypeScatterMin, backends.OpTypeScatterSum,
	backends.OpTypeSign, backends.OpTypeSin, backends.OpTypeSlice, backends.OpTypeSqrt, backends.OpTypeSub,
	backends.OpTypeTanh, backends.OpTypeTranspose, backends.OpTypeWhere,
}
