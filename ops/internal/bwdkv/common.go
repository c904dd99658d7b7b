package bwdkv

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

// The element codecs, the tile loader and the ldmatrix lane offsets.
// Package bwdq has the same helpers (the compiler inlines only a kernel
// package's own functions); keep the two in step.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// Tile sizes: a block owns KVKeys keys and walks query tiles of
// KVQueries; a warp owns 16 keys (one m16 fragment row block).
const (
	Warps     = 4
	KVKeys    = 16 * Warps
	KVQueries = 32
	Pad       = 8 // elements of padding per shared row
)

// SharedBytes is the dynamic shared memory the kernel needs at head dim
// hd: 256 padded rows of 16-bit elements (K 64, V 64, two Q and two dO
// buffers of 32).
func SharedBytes(hd int) int { return 256 * (hd + Pad) * 2 }

// An mmaCodec is a 16-bit element type's conversion from float32, its
// tensor-core multiply, and the packing of two float32 values into an A
// fragment register.
type mmaCodec[T any] interface {
	store(float32) T
	mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32
	pack(lo, hi float32) uint32
}

type f16m struct{}

func (f16m) store(v float32) gpu.Half { return gpu.ToHalf(v) }
func (f16m) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMAF16(t, a, b, c)
}
func (f16m) pack(lo, hi float32) uint32 { return gpu.PackHalf2(gpu.ToHalf(lo), gpu.ToHalf(hi)) }

type bf16m struct{}

func (bf16m) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }
func (bf16m) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMABF16(t, a, b, c)
}
func (bf16m) pack(lo, hi float32) uint32 {
	return gpu.PackBFloat162(gpu.ToBFloat16(lo), gpu.ToBFloat16(hi))
}

// load copies a tile of n rows × hd elements (n and hd constants at each
// call: n 32 or 64, hd 64 or 128), row r at src[base + r·stride ...], into
// sm[dst + r·ld ...] with 16-byte cp.async copies (PTX ISA §9.7.9.25);
// rows ≥ rows are zero-filled without reading src.
//
// Thread tid copies chunk tid%cpr of rows tid/cpr, + step, + 2·step, ...
// (cpr = hd/8 chunks per row, step = 128/cpr rows), so a quarter warp's
// stores are 128 contiguous bytes and its addresses are one base plus a
// constant (shared) or a running sum (global) per copy.
func load[T gpu.Elem](t gpu.Thread, sm []T, dst int, src []T, base, stride, rows, n, hd, tid int) {
	cpr := hd / 8
	shift := 3 + hd/128 // log2(cpr)
	step := Warps * 32 / cpr
	ld := hd + Pad
	r0, cc := tid>>shift, tid&(cpr-1)
	d := dst + r0*ld + 8*cc
	g := base + r0*stride + 8*cc
	//kern:unroll
	for it := 0; it < 8; it++ {
		if it < n/step {
			if r0+it*step < rows {
				gpu.CpAsync(t, &sm[d+it*step*ld], &src[g], 16)
			} else {
				gpu.CpAsyncZFill(t, &sm[d+it*step*ld], &src[0], 16, 0)
			}
			g += step * stride
		}
	}
}

// Per-lane ldmatrix offsets within a tile of rows padded to ld (lane l
// addresses row l%8 of 8×8 matrix l/8; gpu/mma.go gives the fragment
// layouts):
//
//	aOff: a 16-row A operand, matrix i = rows 8·(i%2).., columns 8·(i/2)..
//	bOff: B = the tile's rowsᵀ (ldmatrix, non-trans), matrix i = rows
//	      8·(i/2).., columns 8·(i%2)..: n-tiles 2np, 2np+1 of k-step kk at
//	      bOff + 16·np·ld + 16·kk
//	tOff: B = the tile's rows (ldmatrix.trans), matrix i = rows 8·(i%2)..,
//	      columns 8·(i/2)..: k-step kk (16 rows), n-tiles 2dp, 2dp+1 at
//	      tOff + 16·kk·ld + 16·dp
func offsets(lane, ld int) (aOff, bOff, tOff int) {
	mi, mj := lane>>3, lane&7
	aOff = (8*(mi&1)+mj)*ld + 8*(mi>>1)
	bOff = (8*(mi>>1)+mj)*ld + 8*(mi&1)
	tOff = aOff
	return
}

// udiv divides non-negative ints below 2^32 in 32 bits (a 64-bit
// division is a subroutine call in SASS).
func udiv(a, b int) int { return int(uint32(a) / uint32(b)) }

func posInf() float32 { return math.Float32frombits(0x7f800000) }
