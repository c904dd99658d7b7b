//kern:arch sm_90a

// Package mmh holds the Hopper (sm_90a) GEMM behind ops.Matmul: TMA loads
// into 128-byte swizzled shared memory, a multi-stage mbarrier pipeline,
// warpgroup MMA (wgmma) and warp specialisation (a producer warpgroup that
// only issues copies, two consumer warpgroups that only multiply, with
// setmaxnreg moving registers from the first to the others), persistent
// (a block per SM walks the output tiles). gemm.go has the design,
// epilogue.go the fused epilogue. ops/matmul.go
// chooses it on compute capability 9.0; the portable sm_80 kernels stay in
// ops/internal/mm, whose epilogue epilogue.go repeats so both paths
// fuse and round alike.
//
// It is a package of its own because sm_90a modules load only on
// compute capability 9.0 (kern gen writes one target per package), and
// because of generated-code size.
package mmh

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen
