// Package bwdq holds the dQ kernels of ops.FlashAttentionBackward's v2, on
// the tensor cores, at head dims 64 and 128. Package bwdkv's doc describes
// the pair (a package each, so that each generated PTX file stays small);
// ops/flash_bwd.go the math and the layouts.
package bwdq
