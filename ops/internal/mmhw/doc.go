//kern:arch sm_90a

// Package mmhw is the wide-tile Hopper GEMM behind ops.Matmul ("v3 sm_90a
// 128x256"): the design of ops/internal/mmh (TMA, an mbarrier pipeline,
// wgmma, a producer warpgroup and two consumer warpgroups, persistent)
// with a 128×256 block tile, each consumer warpgroup issuing m64n256k16,
// and the output tiles walked in groups of rows for L2 reuse. gemm.go has
// the design and why.
//
// It is a package of its own, not more kernels in mmh, because kern gen
// writes one PTX module per package and mmh's is already half a megabyte;
// and kern inlines helpers only from a kernel's own package, so the
// epilogue is mmh's, copied (TestEpilogueMatchesMMH checks they agree).
// It has the W [N, K] layout only: B [K, N] keeps mmh's 128×128 kernels.
package mmhw

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen
