package gemvnorm

// v2's device helpers (ops/internal/gemvtc), repeated here: a kernel
// package compiles its own copy. The only addition is tcCodec.round, the
// norm's rounding to the input type.

import (
	"math"

	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/mm"
)

// tcLoadW loads the W chunks of the iteration at chunk c: rows g and
// g+8 of the block's 16, columns 8q..8q+7 of each chunk.
func tcLoadW[A gpu.Elem, CA tcCodec[A]](ca CA, w []A, wa, wb, c int32) (fa, fb [tcUnroll][4]uint32) {
	//kern:unroll
	for u := range tcUnroll {
		kc := (c + int32(u*tcWarps)) << 5
		fa[u] = ca.pack(gpu.Load8(w, int(wa+kc)))
		fb[u] = ca.pack(gpu.Load8(w, int(wb+kc)))
	}
	return fa, fb
}

// tcMMA adds an iteration's chunks to the accumulator: per chunk two
// k16 steps of one mma each (v2's k order, with its first tile of x only).
func tcMMA[A any, CA tcCodec[A]](ca CA, t gpu.Thread, acc [4]float32, fa, fb, f [tcUnroll][4]uint32) [4]float32 {
	//kern:unroll
	for u := range tcUnroll {
		//kern:unroll
		for h := range 2 {
			a := [4]uint32{fa[u][2*h], fb[u][2*h], fa[u][2*h+1], fb[u][2*h+1]}
			acc = ca.mma(t, a, [2]uint32{f[u][2*h], f[u][2*h+1]}, acc)
		}
	}
	return acc
}

// tcCodec is the input type: its packing of 8 elements loaded at once
// (gpu.Load8, one 128-bit load) into four mma registers, the lower
// element in the low half, its mma, and the rounding of a float32 to it.
type tcCodec[A any] interface {
	pack(v [8]A) [4]uint32
	round(v float32) A
	mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32
}

type f16g struct{}

func (f16g) pack(v [8]gpu.Half) [4]uint32 {
	return [4]uint32{gpu.PackHalf2(v[0], v[1]), gpu.PackHalf2(v[2], v[3]), gpu.PackHalf2(v[4], v[5]), gpu.PackHalf2(v[6], v[7])}
}

func (f16g) round(v float32) gpu.Half { return gpu.ToHalf(v) }

func (f16g) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMAF16(t, a, b, c)
}

type bf16g struct{}

func (bf16g) pack(v [8]gpu.BFloat16) [4]uint32 {
	return [4]uint32{gpu.PackBFloat162(v[0], v[1]), gpu.PackBFloat162(v[2], v[3]), gpu.PackBFloat162(v[4], v[5]), gpu.PackBFloat162(v[6], v[7])}
}

func (bf16g) round(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }

func (bf16g) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMABF16(t, a, b, c)
}

// tcStore finishes out[row][col], out[row][col+1] as Matmul's epilogue
// does (col even; with SwiGLU the pair is gate, up of output col/2). The
// same as v1's gemvStore: a kernel package compiles its own copy.
func tcStore[O any, CO codec[O]](co CO, out, bias, res []O, row, col, m, n, act int, v0, v1 float32) {
	if row < m {
		has1 := col+1 < n
		if len(bias) > 0 {
			v0 += co.load(bias[col])
			if has1 {
				v1 += co.load(bias[col+1])
			}
		}
		if act == mm.EpiSwiGLU {
			i := row*(n>>1) + col>>1
			v := v0 / (1 + gpu.Exp(-v0)) * v1
			if len(res) > 0 {
				v += co.load(res[i])
			}
			out[i] = co.store(v)
		} else {
			i := row*n + col
			v0 = tcAct(v0, act)
			if len(res) > 0 {
				v0 += co.load(res[i])
			}
			out[i] = co.store(v0)
			if has1 {
				v1 = tcAct(v1, act)
				if len(res) > 0 {
					v1 += co.load(res[i+1])
				}
				out[i+1] = co.store(v1)
			}
		}
	}
}

// tcAct applies ActSiLU or ActGELU.
func tcAct(v float32, act int) float32 {
	if act == mm.EpiSiLU {
		return v / (1 + gpu.Exp(-v))
	}
	if act == mm.EpiGELU {
		return 0.5 * v * (1 + gpu.Erf(v*math.Sqrt2/2))
	}
	return v
}

// Output codecs, as ops' (dtype.go): float32 arithmetic, one rounding.
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
