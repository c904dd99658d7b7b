package gomlx

// RNGBitGenerator: counter-based random bits, so every element is
// computed independently (no sequential generator to share). The state
// is GoMLX's [3]uint64; the backend reads it as (key, counter, unused).
// Element i of a draw is SplitMix64's output for seed key at position
// counter+i (the golden-ratio increment, then its 30/27/31 xor-shift
// multiply finalizer); uint32 draws take the high 32 bits. The new state
// advances the counter by the number of elements drawn, so successive
// draws never overlap. (GoMLX's simplego draws from a PCG instead, so
// the two backends' random numbers differ; both are uniform bits.)
//
// Also here: copies of uint32 and uint64 tensors (the state, the bits)
// and their conversions to float32 and float64, which is what GoMLX's
// RandomUniform does with the bits.

import "github.com/gokern/kern/gpu"

// splitmix is SplitMix64 for seed key at position pos.
func splitmix(key, pos uint64) uint64 {
	z := key + (pos+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

//kern:kernel block=256
func rngBits32(t gpu.Thread, out []uint32, state []uint64) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = uint32(splitmix(state[0], state[1]+uint64(i)) >> 32)
	}
}

//kern:kernel block=256
func rngBits64(t gpu.Thread, out []uint64, state []uint64) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = splitmix(state[0], state[1]+uint64(i))
	}
}

//kern:kernel block=32
func rngAdvance(t gpu.Thread, out, state []uint64, n int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = state[i]
		if i == 1 {
			out[i] = state[i] + uint64(n)
		}
	}
}

//kern:kernel block=256
func copyU32(t gpu.Thread, out, x []uint32, meta []int32, rank, n, srcOff, dstOff int) {
	copyStrided(t, out, x, meta, rank, n, srcOff, dstOff)
}

//kern:kernel block=256
func copyU64(t gpu.Thread, out, x []uint64, meta []int32, rank, n, srcOff, dstOff int) {
	copyStrided(t, out, x, meta, rank, n, srcOff, dstOff)
}

//kern:kernel block=256
func cvtU32F32(t gpu.Thread, out []float32, x []uint32) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = float32(x[i])
	}
}

//kern:kernel block=256
func cvtU64F64(t gpu.Thread, out []float64, x []uint64) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = float64(x[i])
	}
}
