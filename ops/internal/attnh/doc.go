// Package attnh holds the Hopper (sm_90a) FlashAttention forward kernels
// at head dim 128 (head dim 64: ops/internal/attnh64) behind
// ops.FlashAttention on compute capability 9.0: the same
// algorithm, masks, layouts and outputs as the sm_80 kernels of
// ops/internal/attnk, with the Hopper machinery in place of mma.sync and
// cp.async. Q·Kᵀ is a warpgroup MMA (wgmma) with both operands read from
// shared memory through matrix descriptors, P·V a wgmma with P in
// registers and V read MN-major (row-major [keys, headDim] as TMA lands
// it); Q, K and V tiles are copied by the Tensor Memory Accelerator into
// 128-byte swizzled shared memory, and a producer warp streams K/V tiles
// through a ring of stages guarded by mbarriers (full: the bytes have
// landed; empty: the consumer warpgroup has finished reading). It is a
// separate package so that `kern gen` compiles it for sm_90a alone
// (//kern:arch below) while attnk stays portable. Use it through package
// ops, which checks shapes, makes the tensor maps and sizes the launch.
//
//kern:arch sm_90a
package attnh

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen
