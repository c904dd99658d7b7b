//kern:library

// Package rotary is the rotary position embedding's angle, shared by the
// kernels that rotate q and k (ops' RoPE and KV-cache write, the Qwen3
// engine's fused q/k/v preparation): one routine, so that every path
// rotates by the same bits. It is a kernel library (compiler/library.go):
// kernels of other packages inline SinCos.
//
// Why float64 (ops/rope.go has the figures): a float32 angle loses about
// 2^-8 rad at position 32768. So the inverse frequency ratio^i is formed
// by repeated squaring of ratio = θ^(-2/headDim) (computed on the host
// with math.Pow), multiplied by the position, and reduced to [-π, π]
// with 2π split in two parts, all in float64; only the reduced angle is
// rounded to float32 for gpu.Sin and gpu.Cos.
package rotary

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// SinCos returns sin and cos of pos·ratio^i.
func SinCos(pos, i int, ratio float64) (float32, float32) {
	f, sq := 1.0, ratio
	for e := i; e > 0; e >>= 1 {
		if e&1 != 0 {
			f *= sq
		}
		sq *= sq
	}
	a := float64(pos) * f
	k := math.Floor(a*(1/(2*math.Pi)) + 0.5)
	r := a - k*twoPiHi - k*twoPiLo
	return gpu.Sin(float32(r)), gpu.Cos(float32(r))
}

// 2π = twoPiHi + twoPiLo to about 2^-106.
const (
	twoPiHi = 6.283185307179586
	twoPiLo = 2.4492935982947064e-16
)
