// Package mm holds the tensor-core matrix-multiply kernels behind
// ops.Matmul: the pipelined GEMM (tc.go, "v2") and the any-shape fallback
// (simple.go, "v1"). ops/matmul.go is the API, the argument checks and
// the choice of version and config; this package is only kernels.
//
// It is a package of its own because of generated-code size: each
// pipelined kernel is about 180 KB of PTX, and ops' generated file must
// stay under a megabyte. For the same reason the set of kernels is kept
// small: inputs float16 or bfloat16, outputs float32 or the input type,
// the B layout a block-uniform argument rather than a kernel.
package mm

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen
