package attnk

// The attention kernels of package ops (ops/flash.go describes the
// algorithm, layouts and launch). They live in their own package so that
// their generated PTX, large because every tile loop is unrolled, sits in
// its own file (attnk_kern.go) beside ops_kern.go.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// Tile sizes: FlashM queries per block (16 per warp), FlashN keys per tile.
const (
	FlashM    = 64 // queries per block
	FlashN    = 64 // keys per tile
	FlashWarp = 4  // warps per block
	FlashPad  = 8  // elements of padding per shared row
)

// An mmaCodec is a 16-bit element type's conversions to and from
// float32, its tensor-core multiply, and the packing of two float32
// values into an A fragment register.
type mmaCodec[T any] interface {
	load(T) float32
	store(float32) T
	mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32
	pack(lo, hi float32) uint32
}

type f16m struct{}

func (f16m) load(x gpu.Half) float32  { return x.Float32() }
func (f16m) store(v float32) gpu.Half { return gpu.ToHalf(v) }
func (f16m) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMAF16(t, a, b, c)
}
func (f16m) pack(lo, hi float32) uint32 { return gpu.PackHalf2(gpu.ToHalf(lo), gpu.ToHalf(hi)) }

type bf16m struct{}

func (bf16m) load(x gpu.BFloat16) float32  { return x.Float32() }
func (bf16m) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }
func (bf16m) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMABF16(t, a, b, c)
}
func (bf16m) pack(lo, hi float32) uint32 {
	return gpu.PackBFloat162(gpu.ToBFloat16(lo), gpu.ToBFloat16(hi))
}

// ---------------------------------------------------------------------------
// kernels

//kern:kernel block=128 nobounds
func FlashF16D64(t gpu.Thread, out, q, k, v []gpu.Half, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash(f16m{}, t, out, q, k, v, lse, cuQ, cuK, heads, kvHeads, scaleLog2, causal, wantLSE, 64)
}

//kern:kernel block=128 nobounds
func FlashF16D128(t gpu.Thread, out, q, k, v []gpu.Half, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash(f16m{}, t, out, q, k, v, lse, cuQ, cuK, heads, kvHeads, scaleLog2, causal, wantLSE, 128)
}

//kern:kernel block=128 nobounds
func FlashBF16D64(t gpu.Thread, out, q, k, v []gpu.BFloat16, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash(bf16m{}, t, out, q, k, v, lse, cuQ, cuK, heads, kvHeads, scaleLog2, causal, wantLSE, 64)
}

//kern:kernel block=128 nobounds
func FlashBF16D128(t gpu.Thread, out, q, k, v []gpu.BFloat16, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash(bf16m{}, t, out, q, k, v, lse, cuQ, cuK, heads, kvHeads, scaleLog2, causal, wantLSE, 128)
}

// flash is the kernel body; hd (64 or 128) is a constant at every call,
// so the unrolled loops over it fold and the fragment arrays stay in
// registers (sized for 128, the first hd/8 n-tiles used).
func flash[T gpu.Elem, C mmaCodec[T]](c C, t gpu.Thread, out, q, k, v []T, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool, hd int) {
	b, h, mb := t.BlockIdx().Z, t.BlockIdx().Y, t.BlockIdx().X
	qs, qe := int(cuQ[b]), int(cuQ[b+1])
	ks, ke := int(cuK[b]), int(cuK[b+1])
	totalQ, totalK := len(q)/(heads*hd), len(k)/(kvHeads*hd)
	if qs < 0 || qe < qs || qe > totalQ || ks < 0 || ke < ks || ke > totalK {
		panic("ops.FlashAttention: cuSeqQ or cuSeqK is not an ordered list of offsets within the tokens")
	}
	lq, lk := qe-qs, ke-ks
	if lq > t.GridDim().X*FlashM {
		panic("ops.FlashAttention: a query sequence is longer than maxSeqQ")
	}
	if mb*FlashM >= lq {
		return
	}
	kvh := int(uint32(h) / (uint32(heads) / uint32(kvHeads)))
	ld := hd + FlashPad
	tile := FlashM * ld // elements of one shared tile
	sm := gpu.DynShared[T](t)
	tid, lane := t.ThreadIdx().X, t.Lane()
	g, tig := lane>>2, lane&3
	row0 := mb*FlashM + t.Warp()*16 + g // this lane's first query row in the sequence

	// Keys this block needs: all lk, or, causal, up to its last row's
	// diagonal (bottom-right aligned).
	kend := lk
	if causal {
		kend = min(lk, (mb+1)*FlashM+lk-lq)
	}
	ntiles := 0
	if kend > 0 {
		ntiles = (kend + FlashN - 1) >> 6 // FlashN = 64
	}

	// Q tile → shared (group 0), K/V tile 0 → buffer 0 (group 1).
	qStride, kvStride := heads*hd, kvHeads*hd
	flashLoad(t, sm, 0, q, (qs+mb*FlashM)*qStride+h*hd, qStride, lq-mb*FlashM, hd, ld, tid)
	gpu.CpAsyncCommit(t)
	if ntiles > 0 {
		flashLoad(t, sm, tile, k, ks*kvStride+kvh*hd, kvStride, lk, hd, ld, tid)
		flashLoad(t, sm, 3*tile, v, ks*kvStride+kvh*hd, kvStride, lk, hd, ld, tid)
	}
	gpu.CpAsyncCommit(t)
	gpu.CpAsyncWait(t, 1)
	t.Sync()

	// Q fragments: A of m16n8k16, one [4]uint32 per k-step of 16 dims.
	// Lane l addresses row l%8 of 8×8 matrix l/8 (gpu/mma.go: a[i] is
	// rows 8·(i%2).., columns 8·(i/2)..). At headDim 128 they are loaded
	// once into registers; at 64 they are re-read from shared memory per
	// tile (4 more ldmatrix per 32), because ptxas caps that kernel at 128
	// registers on sm_80 and the 16 registers would spill.
	var qf [8][4]uint32
	mi, mj := lane>>3, lane&7
	qAddr := (t.Warp()*16+8*(mi&1)+mj)*ld + 8*(mi>>1)
	//kern:unroll
	for kk := 0; kk < 8; kk++ {
		if kk < hd/16 && hd > 64 {
			qf[kk] = gpu.LdMatrixX4(t, &sm[qAddr+16*kk])
		}
	}

	var o [16][4]float32 // O rows g, g+8: n-tile dt holds dims 8dt+2tig, +1 (gpu/mma.go's C layout)
	m := [2]float32{negInf(), negInf()}
	var l [2]float32
	// Per-lane ldmatrix offsets within a tile: K as B (non-trans, matrix
	// i = keys 8·(i/2).., dims 8·(i%2)..), V as B (trans, matrix i = keys
	// 8·(i%2).., dims 8·(i/2)..).
	kAddr := (8*(mi>>1)+mj)*ld + 8*(mi&1)
	vAddr := (8*(mi&1)+mj)*ld + 8*(mi>>1)
	for j := 0; j < ntiles; j++ {
		if j+1 < ntiles {
			nb := tile * (1 + (j+1)&1)
			off := (ks+(j+1)*FlashN)*kvStride + kvh*hd
			flashLoad(t, sm, nb, k, off, kvStride, lk-(j+1)*FlashN, hd, ld, tid)
			flashLoad(t, sm, nb+2*tile, v, off, kvStride, lk-(j+1)*FlashN, hd, ld, tid)
		}
		gpu.CpAsyncCommit(t)
		gpu.CpAsyncWait(t, 1) // tile j's group is complete
		t.Sync()
		kb := tile * (1 + j&1)
		vb := kb + 2*tile

		// S = Q·Kᵀ: 8 n-tiles of 8 keys.
		var s [8][4]float32
		//kern:unroll
		for kk := 0; kk < 8; kk++ {
			if kk < hd/16 {
				a := qf[kk]
				if hd == 64 {
					a = gpu.LdMatrixX4(t, &sm[qAddr+16*kk])
				}
				//kern:unroll
				for np := 0; np < 4; np++ {
					r := gpu.LdMatrixX4(t, &sm[kb+kAddr+16*np*ld+16*kk])
					s[2*np] = c.mma(t, a, [2]uint32{r[0], r[1]}, s[2*np])
					s[2*np+1] = c.mma(t, a, [2]uint32{r[2], r[3]}, s[2*np+1])
				}
			}
		}
		// Mask keys past the sequence or past the diagonal, only in the
		// tiles that reach either.
		// Element e of s is key k0 + 2·tig + 8·(e/4) + e%2 of row r =
		// (e/2)%2: masked when that constant offset reaches the row's
		// limit minus k0 + 2·tig.
		k0 := j * FlashN
		if k0+FlashN > lk || causal && k0+FlashN-1 > mb*FlashM+lk-lq {
			var lim [2]int32
			//kern:unroll
			for r := 0; r < 2; r++ {
				lr := lk
				if causal {
					lr = min(lk, row0+8*r+lk-lq+1)
				}
				lim[r] = int32(lr - k0 - 2*tig)
			}
			//kern:unroll
			for e := 0; e < 32; e++ {
				if int32(8*(e/4)+e%2) >= lim[(e/2)%2] {
					s[e/4][e%4] = negInf()
				}
			}
		}

		// Online softmax, rows g (r=0) and g+8 (r=1). m holds the raw
		// maximum; with scale > 0 the maximum of the scaled scores is
		// m·scaleLog2, so the scale folds into one FFMA per exponent.
		var p [4][4]uint32
		//kern:unroll
		for r := 0; r < 2; r++ {
			mx := m[r]
			//kern:unroll
			for nt := 0; nt < 8; nt++ {
				mx = gpu.Max(mx, gpu.Max(s[nt][2*r], s[nt][2*r+1]))
			}
			mx = gpu.Max(mx, gpu.ShflXor(t, mx, 1))
			mx = gpu.Max(mx, gpu.ShflXor(t, mx, 2))
			msub := mx * scaleLog2
			if mx == negInf() {
				msub = 0 // nothing unmasked yet: keep 2^(-Inf - 0) = 0, not NaN
			}
			alpha := gpu.Exp2(gpu.FMA(m[r], scaleLog2, -msub))
			m[r] = mx
			sum := float32(0)
			//kern:unroll
			for nt := 0; nt < 8; nt++ {
				p0 := gpu.Exp2(gpu.FMA(s[nt][2*r], scaleLog2, -msub))
				p1 := gpu.Exp2(gpu.FMA(s[nt][2*r+1], scaleLog2, -msub))
				sum += p0 + p1
				// P's A fragment for k-step nt/2: a[r] from n-tile
				// 2kk, a[2+r] from n-tile 2kk+1.
				p[nt/2][r+2*(nt%2)] = c.pack(p0, p1)
			}
			l[r] = l[r]*alpha + sum
			//kern:unroll
			for dt := 0; dt < 16; dt++ {
				if dt < hd/8 {
					o[dt][2*r] *= alpha
					o[dt][2*r+1] *= alpha
				}
			}
		}

		// O += P·V: 4 k-steps of 16 keys, hd/8 n-tiles of 8 dims.
		//kern:unroll
		for kk := 0; kk < 4; kk++ {
			a := p[kk]
			//kern:unroll
			for dp := 0; dp < 8; dp++ {
				if dp < hd/16 {
					r := gpu.LdMatrixX4Trans(t, &sm[vb+vAddr+16*kk*ld+16*dp])
					o[2*dp] = c.mma(t, a, [2]uint32{r[0], r[1]}, o[2*dp])
					o[2*dp+1] = c.mma(t, a, [2]uint32{r[2], r[3]}, o[2*dp+1])
				}
			}
		}
		t.Sync() // every warp is done with this buffer before it is refilled
	}

	// Finish: the quad's partial sums, O/ℓ, the store and the LSE.
	//kern:unroll
	for r := 0; r < 2; r++ {
		l[r] += gpu.ShflXor(t, l[r], 1)
		l[r] += gpu.ShflXor(t, l[r], 2)
		inv := float32(0)
		if l[r] > 0 {
			inv = 1 / l[r]
		}
		qi := row0 + 8*r
		if qi < lq {
			ob := (qs+qi)*qStride + h*hd + 2*tig
			//kern:unroll
			for dt := 0; dt < 16; dt++ {
				if dt < hd/8 { // a 32-bit store per pair (ob is even)
					gpu.Store2(out, ob+8*dt, [2]T{c.store(o[dt][2*r] * inv), c.store(o[dt][2*r+1] * inv)})
				}
			}
			if wantLSE && tig == 0 {
				x := negInf()
				if l[r] > 0 {
					x = gpu.FMA(m[r], scaleLog2, gpu.Log2(l[r])) * math.Ln2
				}
				lse[h*totalQ+qs+qi] = x
			}
		}
	}
}

// flashLoad copies a tile of FlashM rows × hd elements, row r at
// src[base + r·stride ...], into sm[dst + r·ld ...] with 16-byte cp.async
// copies, hd/16 per thread (128 threads); rows ≥ rows are zero-filled
// without reading src.
//
// Thread tid copies chunk tid%cpr of rows tid/cpr, + step, + 2·step, ...
// (cpr = hd/8 chunks per row, step = 128/cpr rows), so its addresses are
// one base plus a constant (shared) or a running sum (global) per copy.
func flashLoad[T gpu.Elem](t gpu.Thread, sm []T, dst int, src []T, base, stride, rows, hd, ld, tid int) {
	cpr := hd / 8 // 16-byte chunks per row: 8 or 16
	shift := 3 + hd/128
	step := FlashWarp * 32 / cpr
	r0, cc := tid>>shift, tid&(cpr-1)
	d := dst + r0*ld + 8*cc
	g := base + r0*stride + 8*cc
	//kern:unroll
	for it := 0; it < 16; it++ {
		if it < hd/16 {
			if r0+it*step < rows {
				gpu.CpAsync(t, &sm[d+it*step*ld], &src[g], 16)
			} else {
				gpu.CpAsyncZFill(t, &sm[d+it*step*ld], &src[0], 16, 0)
			}
			g += step * stride
		}
	}
}

func negInf() float32 { return math.Float32frombits(0xff800000) }
