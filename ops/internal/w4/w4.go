// Package w4 holds the W4A16 decode GEMVs behind ops.MatmulInt4: 16-bit
// activations times int4 weights with group-128 float32 scales, the
// weights dequantized in registers as they stream in. It is a package of
// its own to keep each generated file under a megabyte (see
// ops/internal/mm).
//
//	out[i,j] = Σ_g scales[j,g] · Σ_{k in group g} (nibble(j,k) - 8) · x[i,k]
//
// Shapes (row-major): x [M, K] In ∈ {float16, bfloat16}; packed [N, K/2]
// uint8, byte k of a row holding element 2k in its low nibble and 2k+1 in
// its high one, zero point 8 (ops.QuantizeInt4's format); scales
// [N, K/128] float32; out [M, N] O ∈ {float32, In}. K is a multiple of
// 256 is not needed: K a multiple of 32 (one 16-byte chunk of a row, so
// rows stay 16-byte aligned and a chunk never straddles a scale group).
//
// Each warp owns four rows of W and walks K in steps of 256 elements: lane
// l copies the 16-byte chunk l%8 of row l/8 (32 elements, 128-bit
// cp.async), and chunk l of each row of x (4 rows per pass). After the
// step lands (cp.async.wait_group, then a warp barrier, since a lane reads
// x that other lanes copied), lane l multiplies its 32 weights with the
// matching 32 elements of x in four 8-element parts, the part order
// rotated by lane so that each quarter warp's 128-bit shared loads hit 8
// distinct bank groups. The 32 weights are dequantized once per step
// into 16 packed pairs of 16-bit floats (a PRMT, a LOP3 and an HFMA2 per
// pair: w4Pairs and the codecs' dequant, no I2F) and reused for every row
// of x. With f16 activations the products of a part are summed in f16x2
// (HFMA2, two weights per instruction; the codec's doc bounds the error),
// with bf16 in float32 (exact products); each part is then added in
// float32 and scaled once per chunk. The 8 lanes of a row then meet with
// three shuffles.
//
// Block: 2 warps (8 rows of W). Versions: v1 (this file, CUDA cores) and
// v2 (tc.go, tensor cores, which ops takes by default).
package w4

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

import (
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// Launch shape and limits, for ops.MatmulInt4.
const (
	Warps        = w4Warps
	RowsPerBlock = w4Warps * w4WRows
	Shared       = w4Warps * w4WarpSh * 2 // dynamic shared bytes
	Group        = 128                    // elements per scale
	Chunk        = 32                     // K must be a multiple
)

const (
	w4Warps  = 2
	w4WRows  = 4   // rows of W per warp
	w4Rows   = 4   // rows of x per pass
	w4Stages = 4   // steps in flight (a power of 2)
	w4Step   = 256 // elements per row per step
	// Per stage: W (4 rows × 128 bytes = 256 halfwords' worth) then x
	// (4 rows × 256 elements), in 16-bit elements.
	w4StageW = w4WRows * w4Step / 4
	w4Stage  = w4StageW + w4Rows*w4Step
	w4WarpSh = w4Stages * w4Stage
)

//kern:kernel block=64 nobounds
func w4F16F32(t gpu.Thread, out []float32, x []gpu.Half, packed []uint8, scales []float32, m, n, k int) {
	w4gemv(f16g{}, f32c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), out, x, packed, scales, m, n, k)
}

//kern:kernel block=64 nobounds
func w4F16F16(t gpu.Thread, out []gpu.Half, x []gpu.Half, packed []uint8, scales []float32, m, n, k int) {
	w4gemv(f16g{}, f16c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), out, x, packed, scales, m, n, k)
}

//kern:kernel block=64 nobounds
func w4BF16F32(t gpu.Thread, out []float32, x []gpu.BFloat16, packed []uint8, scales []float32, m, n, k int) {
	w4gemv(bf16g{}, f32c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), out, x, packed, scales, m, n, k)
}

//kern:kernel block=64 nobounds
func w4BF16BF16(t gpu.Thread, out []gpu.BFloat16, x []gpu.BFloat16, packed []uint8, scales []float32, m, n, k int) {
	w4gemv(bf16g{}, bf16c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), out, x, packed, scales, m, n, k)
}

// Kernels indexed [input: f16, bf16][output: f32, the input type].
var Kernels = [2][2]*kern.Kernel{
	{w4F16F32Kernel.Kernel(), w4F16F16Kernel.Kernel()},
	{w4BF16F32Kernel.Kernel(), w4BF16BF16Kernel.Kernel()},
}

func w4gemv[A gpu.Elem, O any, CA xCodec, CO codec[O]](ca CA, co CO, t gpu.Thread, sx []A, sb []uint8, sw []uint32,
	out []O, x []A, packed []uint8, scales []float32, m, n, k int) {
	l := t.Lane()
	row0 := (t.BlockIdx().X*w4Warps + t.Warp()) * w4WRows
	if row0 < n { // warp-uniform
		wsh := t.Warp() * w4WarpSh // this warp's stages, in 16-bit elements
		wr, wc := l>>3, l&7        // this lane's W row (of 4) and chunk (of 8)
		row := row0 + wr
		groups := k >> 7
		if k&(Group-1) != 0 {
			groups++
		}
		steps := int32((k + w4Step - 1) / w4Step)
		// Offsets computed once (32-bit: ops keeps every operand under
		// 2³¹ elements): a row past N is clamped to the last, whose sums
		// are computed and never stored.
		crow := min(row, n-1)
		wSrc := int32(crow * k >> 1) // the row's first byte of packed
		sOff := int32(crow * groups)
		k32, l32, wc32 := int32(k), int32(l), int32(wc)
		for mb := 0; mb < m; mb += w4Rows {
			var acc [w4Rows]float32
			var xOff [w4Rows]int32
			//kern:unroll
			for i := range w4Rows {
				xOff[i] = int32(min(mb+i, m-1) * k)
			}
			//kern:unroll
			for s := range w4Stages - 1 {
				if int32(s) < steps {
					w4Issue(t, sx, sb, x, packed, wsh, int32(s), wSrc, xOff, mb, m, k32, l32)
				} else {
					gpu.CpAsyncCommit(t)
				}
			}
			for st := int32(0); st < steps; st++ {
				gpu.CpAsyncWait(t, w4Stages-2)
				t.SyncWarp() // x chunks other lanes copied
				base := wsh + int(st&(w4Stages-1))*w4Stage
				kc := st*w4Step + wc32*Chunk // this lane's 32 elements
				if kc < k32 {
					wp := ca.dequant(w4Rotate(gpu.Load4(sw, base>>1+l*4), l>>1&3))
					sc := scales[sOff+kc>>7] * ca.wscale()
					//kern:unroll
					for i := range w4Rows {
						if mb+i < m {
							acc[i] = gpu.FMA(sc, w4Dot(ca, sw, base+w4StageW+i*w4Step+wc*Chunk, wp, l), acc[i])
						}
					}
				}
				t.SyncWarp() // every lane is done with the stage before it is refilled
				if nx := st + w4Stages - 1; nx < steps {
					w4Issue(t, sx, sb, x, packed, wsh, nx, wSrc, xOff, mb, m, k32, l32)
				} else {
					gpu.CpAsyncCommit(t) // an empty group keeps the wait count
				}
			}
			gpu.CpAsyncWait(t, 0)
			//kern:unroll
			for i := range w4Rows {
				v := acc[i]
				//kern:unroll
				for off := 1; off < 8; off *= 2 {
					v += gpu.ShflXor(t, v, off)
				}
				if wc == 0 && row < n && mb+i < m {
					out[(mb+i)*n+row] = co.store(v)
				}
			}
		}
	}
}

// w4Issue copies step st (< steps): the lane's 16-byte chunk of packed W
// (its row starts at byte wSrc) and chunk l of each of x's rows mb.. (from the
// row offsets xOff), then commits the group. A chunk past K, in the last
// step, is copied from the row's last chunk instead: w4gemv never reads
// it (it skips kc ≥ k; K is a multiple of 32, so a lane's W chunk and
// the x it meets are all in or all out), and a plain copy needs no
// predicate. Rows of x past m are not copied at all.
func w4Issue[A gpu.Elem](t gpu.Thread, sx []A, sb []uint8, x []A, packed []uint8, wsh int, st, wSrc int32, xOff [w4Rows]int32, mb, m int, k, l int32) {
	base := int32(wsh) + (st&(w4Stages-1))*w4Stage
	kc := min(st*w4Step+(l&7)*Chunk, k-Chunk)
	gpu.CpAsync(t, &sb[base*2+l*16], &packed[wSrc+kc>>1], 16)
	xc := min(st*w4Step+l*8, k-8)
	// Row mb of x always exists; the others sit behind one uniform
	// branch, so that M = 1 does not issue their predicated copies.
	gpu.CpAsync(t, &sx[base+int32(w4StageW)+l*8], &x[xOff[0]+xc], 16)
	if mb+1 < m {
		//kern:unroll
		for i := 1; i < w4Rows; i++ {
			if mb+i < m { // rows of x past m are never read: no copy at all
				gpu.CpAsync(t, &sx[base+int32(w4StageW+i*w4Step)+l*8], &x[xOff[i]+xc], 16)
			}
		}
	}
	gpu.CpAsyncCommit(t)
}

// w4Rotate returns q rotated left by r (0..3) words: word j of the result
// is q[(j+r)%4], the order w4Dot takes the parts in.
func w4Rotate(q [4]uint32, r int) [4]uint32 {
	if r&1 != 0 {
		q = [4]uint32{q[1], q[2], q[3], q[0]}
	}
	if r&2 != 0 {
		q = [4]uint32{q[2], q[3], q[0], q[1]}
	}
	return q
}

// w4Pairs unpacks 32 nibbles (word j: elements 8j..8j+7, element e in
// bits 4e%32..) into 16 pairs of 16-bit floats, pair p of word j holding
// elements 8j+2p (low lane) and 8j+2p+1, each as magic + nibble: magic is
// 0x6400 (f16 1024) or 0x4300 (bf16 128), where the last place is 1, so
// OR-ing a nibble into the mantissa adds it exactly. A byte permute puts
// byte p of the word in the low lane and byte p of the word shifted right
// by 4 in the high one, and one mask keeps the two low nibbles (PRMT, then
// a LOP3 for the AND and the OR).
func w4Pairs(q [4]uint32, magic uint32) [16]uint32 {
	var h [16]uint32
	//kern:unroll
	for j := range 4 {
		v := q[j] >> 4
		//kern:unroll
		for p := range 4 {
			h[4*j+p] = gpu.Prmt(q[j], v, uint32(p|(p+4)<<8))&0x000f000f | magic
		}
	}
	return h
}

// w4Dot is Σ w·x over a lane's 32 elements: w the 16 dequantized pairs,
// part j (8 elements, 4 pairs) being the lane's part (l/2 + j)%4, as
// w4Rotate ordered them, and x the 32 elements at sw[xoff/2..]. Taking the
// parts in that order makes each quarter warp's 16-byte loads of x cover
// all 32 banks. The result is in units of 1/wscale.
func w4Dot[CA xCodec](ca CA, sw []uint32, xoff int, w [16]uint32, l int) float32 {
	sum := float32(0)
	//kern:unroll
	for j := range 4 {
		xs := gpu.Load4(sw, xoff>>1+((l>>1+j)&3)*4)
		sum += ca.part([4]uint32{w[4*j], w[4*j+1], w[4*j+2], w[4*j+3]}, xs)
	}
	return sum
}

// xCodec is the activation type's arithmetic: dequant turns 32 nibbles
// into 16 packed pairs of weights, part is the dot product of 4 such pairs
// with 8 activations (4 words of x), in units of 1/wscale.
type xCodec interface {
	dequant(q [4]uint32) [16]uint32
	part(w, x [4]uint32) float32
	wscale() float32
}

// f16g keeps the weights as f16x2 (nibble - 8)/16, exact (|w| ≤ 1/2),
// and multiplies them with x two at a time (HFMA2): the four products of
// each lane of a part are summed in f16, then the two lanes are widened
// and added in float32. Each product and partial sum is rounded to f16
// (relative 2⁻¹¹), so a part carries an error of at most about 2⁻⁹ of
// Σ|w·x|; the division by 16 keeps the f16 sums finite for |x| < 32752.
// One FMA2 dequantizes a pair: (1024 + n)/16 - 64.5 = (n - 8)/16, exact.
type f16g struct{}

func (f16g) dequant(q [4]uint32) [16]uint32 {
	h := w4Pairs(q, 0x64006400)
	//kern:unroll
	for i := range 16 {
		h[i] = uint32(gpu.FMA2(gpu.Half2(h[i]), 0x2c002c00, 0xd408d408)) // ×1/16, -64.5
	}
	return h
}

func (f16g) part(w, x [4]uint32) float32 {
	a := gpu.Mul2(gpu.Half2(w[0]), gpu.Half2(x[0]))
	//kern:unroll
	for i := 1; i < 4; i++ {
		a = gpu.FMA2(gpu.Half2(w[i]), gpu.Half2(x[i]), a)
	}
	return gpu.Half(uint16(a)).Float32() + gpu.Half(uint16(uint32(a)>>16)).Float32()
}

func (f16g) wscale() float32 { return 16 }

// bf16g keeps float32 products: bf16x2 has 8 significant bits, too few to
// sum in. The pairs are dequantized in bf16x2 ((128 + n) - 136 = n - 8,
// exact, one FMA2), then each lane widened to float32 by a shift or a mask,
// as is x, and multiplied in float32 (exact: |n - 8| ≤ 8).
type bf16g struct{}

func (bf16g) dequant(q [4]uint32) [16]uint32 {
	h := w4Pairs(q, 0x43004300)
	//kern:unroll
	for i := range 16 {
		h[i] = uint32(gpu.Sub2(gpu.BFloat162(h[i]), 0x43084308)) // -136
	}
	return h
}

func (bf16g) part(w, x [4]uint32) float32 {
	s := float32(0)
	//kern:unroll
	for i := range 4 {
		s = gpu.FMA(math.Float32frombits(w[i]<<16), math.Float32frombits(x[i]<<16), s)
		s = gpu.FMA(math.Float32frombits(w[i]&^0xffff), math.Float32frombits(x[i]&^0xffff), s)
	}
	return s
}

func (bf16g) wscale() float32 { return 1 }

// Output codecs, as ops' (dtype.go).
type codec[T any] interface{ store(float32) T }

type f32c struct{}

func (f32c) store(v float32) float32 { return v }

type f16c struct{}

func (f16c) store(v float32) gpu.Half { return gpu.ToHalf(v) }

type bf16c struct{}

func (bf16c) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }
