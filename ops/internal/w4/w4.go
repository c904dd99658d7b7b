// Package w4 holds the W4A16 decode GEMV behind ops.MatmulInt4: 16-bit
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
// distinct bank groups. The integer products are summed per part in
// float32 (exact: |nibble - 8| ≤ 8) and scaled once per chunk. The 8
// lanes of a row then meet with three shuffles. The 32 weights are
// dequantized once per step (float bit tricks, no I2F) and reused for
// every row of x.
//
// Block: 2 warps (8 rows of W). Versions: v1 only.
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
					q := w4Rotate(gpu.Load4(sw, base>>1+l*4), l>>1&3)
					wf := w4Dequant(q)
					sc := scales[sOff+kc>>7]
					//kern:unroll
					for i := range w4Rows {
						if mb+i < m {
							acc[i] = gpu.FMA(sc, w4Dot(ca, sw, base+w4StageW+i*w4Step+wc*Chunk, wf, l), acc[i])
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

// w4Dequant unpacks 32 nibbles (word j: elements 8j..8j+7, element e in
// bits 4e%32..) to float32 nibble - 8 without an integer-to-float
// conversion: 0x4b000000 | nib is the float 2²³ + nib, exactly.
func w4Dequant(q [4]uint32) [32]float32 {
	var f [32]float32
	//kern:unroll
	for j := range 4 {
		//kern:unroll
		for e := range 8 {
			f[8*j+e] = math.Float32frombits(0x4b000000|q[j]>>(4*e)&15) - (0x1p23 + 8)
		}
	}
	return f
}

// w4Dot is Σ w·x over a lane's 32 elements: wf the dequantized weights,
// part j (8 elements) being the lane's part (l/2 + j)%4, as w4Rotate
// ordered them, and x the 32 elements at sw[xoff/2..]. Taking the parts in
// that order makes each quarter warp's 16-byte loads of x cover all 32
// banks.
func w4Dot[CA xCodec](ca CA, sw []uint32, xoff int, wf [32]float32, l int) float32 {
	sum := float32(0)
	//kern:unroll
	for j := range 4 {
		xs := gpu.Load4(sw, xoff>>1+((l>>1+j)&3)*4)
		//kern:unroll
		for h := range 4 {
			sum = gpu.FMA(wf[8*j+2*h+1], ca.hi(xs[h]), gpu.FMA(wf[8*j+2*h], ca.lo(xs[h]), sum))
		}
	}
	return sum
}

// xCodec unpacks two 16-bit activations from a 32-bit word.
type xCodec interface {
	lo(w uint32) float32
	hi(w uint32) float32
}

type f16g struct{}

func (f16g) lo(w uint32) float32 { return gpu.Half(uint16(w)).Float32() }
func (f16g) hi(w uint32) float32 { return gpu.Half(uint16(w >> 16)).Float32() }

type bf16g struct{}

func (bf16g) lo(w uint32) float32 { return math.Float32frombits(w << 16) }
func (bf16g) hi(w uint32) float32 { return math.Float32frombits(w &^ 0xffff) }

// Output codecs, as ops' (dtype.go).
type codec[T any] interface{ store(float32) T }

type f32c struct{}

func (f32c) store(v float32) float32 { return v }

type f16c struct{}

func (f16c) store(v float32) gpu.Half { return gpu.ToHalf(v) }

type bf16c struct{}

func (bf16c) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }
