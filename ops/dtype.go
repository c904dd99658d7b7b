package ops

// Element types: the Float constraint of the API, the codecs kernels use
// to load and store float32/float16/bfloat16 elements through one generic
// body, and the per-type kernel tables the Go functions dispatch on.

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// Float is the element types of activations and weights: float32,
// IEEE half precision and bfloat16. Arithmetic is float32 for all three.
type Float interface {
	float32 | gpu.Half | gpu.BFloat16
}

// A codec converts one element type to float32 (exactly) and back (round
// to nearest even). Kernel bodies are generic over a codec so that one
// body serves every element type: a kernel is a one-line wrapper passing
// f32c{}, f16c{} or bf16c{}. All arithmetic is on float32 values, which
// also sidesteps a compiler limitation: a generic helper cannot yet
// declare a local of its type parameter's type (kern reports it as an
// interface value), so bodies pass T values straight from a load to a
// store.
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

// kset is one kernel per element type, indexed by dtypeIndex.
type kset [3]*kern.Kernel

// pick returns the kernel of s for element type T.
func pick[T Float](s kset) *kern.Kernel { return s[dtypeIndex[T]()] }

// dtypeIndex is 0, 1, 2 for float32, float16, bfloat16.
func dtypeIndex[T Float]() int {
	var z T
	switch any(z).(type) {
	case gpu.Half:
		return 1
	case gpu.BFloat16:
		return 2
	}
	return 0
}

// dtypeName is T's name in messages.
func dtypeName[T Float]() string {
	return [3]string{"float32", "float16", "bfloat16"}[dtypeIndex[T]()]
}
