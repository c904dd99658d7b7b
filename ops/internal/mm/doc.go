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

import "github.com/gokern/kern/gpu"

// A codec converts an output element type to float32 and back (round to
// nearest even), as ops' codecs do; inCodec adds the input types' mma.
type codec[T any] interface {
	load(T) float32
	store(float32) T
}

type f32c struct{}

func (f32c) load(x float32) float32  { return x }
func (f32c) store(v float32) float32 { return v }

type f16c struct{}

func (f16c) load(x gpu.Half) float32  { return x.Float32() }
func (f16c) store(v float32) gpu.Half { return gpu.ToHalf(v) }

type bf16c struct{}

func (bf16c) load(x gpu.BFloat16) float32  { return x.Float32() }
func (bf16c) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }

const sqrtHalf = 0.70710678118654752440 // 1/√2
