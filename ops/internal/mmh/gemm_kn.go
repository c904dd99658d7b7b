package mmh

// C = A·B with B [K, N] row-major (ops.Matmul's RowMajorKN): the same
// kernel as gemm.go with the second operand MN-major (PTX ISA §9.7.15.5.1,
// imm-trans-b = 1; gpu/wgmma_major.go). A stage's B is the k tile's BK
// rows of the block's 128 columns, copied as two TMA boxes of KNBoxN
// columns (128 bytes, the swizzle's width) × BK rows, one after the other:
// each lands as BK/8 atoms of 8 k rows × 128 bytes, so the descriptor has
// SBO 1024 (the next eight k rows) and LBO 8 KiB (the second box: columns
// 64..127), and a k16 slice starts 16 rows (2 KiB) on. The stage holds
// the same 16 KiB as W's 128×64 box, so StageBytes, the barriers and the
// epilogue are unchanged. Edges: columns past N and rows past K are
// TMA's zeros, as for W. The tensor map of b is Dims {n, k}, box
// {KNBoxN, BoxK} (N a multiple of 8: a 16-byte row stride). KNBoxN is in
// gemm.go, which the planted-bug tests compile on its own.

import "github.com/gokern/kern/gpu"

//kern:kernel block=384 minblocks=1 nobounds
func GemmKNF16F32(t gpu.Thread, c []float32, amap, bmap []uint64, bias, res []float32, m, n, k, act, stages int) {
	gemm(false, true, f32c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[float32](t), c, amap, bmap, bias, res, m, n, k, act, stages)
}

//kern:kernel block=384 minblocks=1 nobounds
func GemmKNF16F16(t gpu.Thread, c []gpu.Half, amap, bmap []uint64, bias, res []gpu.Half, m, n, k, act, stages int) {
	gemm(false, true, f16c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[float32](t), c, amap, bmap, bias, res, m, n, k, act, stages)
}

//kern:kernel block=384 minblocks=1 nobounds
func GemmKNBF16F32(t gpu.Thread, c []float32, amap, bmap []uint64, bias, res []float32, m, n, k, act, stages int) {
	gemm(true, true, f32c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[float32](t), c, amap, bmap, bias, res, m, n, k, act, stages)
}

//kern:kernel block=384 minblocks=1 nobounds
func GemmKNBF16BF16(t gpu.Thread, c []gpu.BFloat16, amap, bmap []uint64, bias, res []gpu.BFloat16, m, n, k, act, stages int) {
	gemm(true, true, bf16c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[float32](t), c, amap, bmap, bias, res, m, n, k, act, stages)
}
