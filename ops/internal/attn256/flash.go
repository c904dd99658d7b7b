package attn256

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

// The head-dim-256 prefill kernel (ops/flash.go describes the algorithm,
// layouts and launch; this is the same FlashAttention-2 forward pass with
// tiles resized for 256 dims).
//
// Tiles: a block of 4 warps owns 64 queries (16 per warp) as at 64 and
// 128, but keys stream in tiles of 32, not 64. Per lane the O accumulator
// of 16 rows × 256 dims is already 128 f32 registers; a 64-key tile adds
// 32 registers of S and 16 of P, which leaves too little for addresses
// under ptxas's cap of 255. Q's fragments (64 registers at 256 dims) are
// re-read from shared memory with ldmatrix every tile, as attnk does at
// head dim 64.
//
// Shared memory, rows padded to 264 elements (528 bytes = 4·128 + 16, so
// ldmatrix's 8 row addresses and a quarter warp's cp.async stores each hit
// 8 distinct 16-byte bank groups): Q 64 rows, K and V two buffers of 32
// rows each; 64·264·2 + 4·32·264·2 = 99 KiB, dynamic (sm_80 allows 163
// KiB per block, sm_90 227 KiB).

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// Tile sizes.
const (
	FlashM    = 64  // queries per block
	FlashN    = 32  // keys per tile
	FlashWarp = 4   // warps per block
	FlashPad  = 8   // elements of padding per shared row
	HeadDim   = 256 // the only head dimension of this package
	ld        = HeadDim + FlashPad
	qTile     = FlashM * ld // elements of the Q tile
	kvTile    = FlashN * ld // elements of one K or V buffer
	// SharedBytes is the dynamic shared memory a block needs.
	SharedBytes = (qTile + 4*kvTile) * 2
)

// An mmaCodec is a 16-bit element type's conversions to and from
// float32, its tensor-core multiply, and the packing of two float32
// values into an A fragment register.
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

//kern:kernel block=128 nobounds
func FlashF16D256(t gpu.Thread, out, q, k, v []gpu.Half, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash(f16m{}, t, out, q, k, v, lse, cuQ, cuK, heads, kvHeads, scaleLog2, causal, wantLSE)
}

//kern:kernel block=128 nobounds
func FlashBF16D256(t gpu.Thread, out, q, k, v []gpu.BFloat16, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	flash(bf16m{}, t, out, q, k, v, lse, cuQ, cuK, heads, kvHeads, scaleLog2, causal, wantLSE)
}

// flash is the kernel body: attnk's with FlashN = 32 keys per tile and Q
// always read from shared memory.
func flash[T gpu.Elem, C mmaCodec[T]](c C, t gpu.Thread, out, q, k, v []T, lse []float32, cuQ, cuK []int32, heads, kvHeads int, scaleLog2 float32, causal, wantLSE bool) {
	const hd = HeadDim
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
		ntiles = (kend + FlashN - 1) >> 5 // FlashN = 32
	}

	// Q tile → shared (group 0), K/V tile 0 → buffer 0 (group 1). Buffer
	// layout: Q at 0, K buffers at qTile and qTile+kvTile, V buffers 2
	// kvTiles further.
	qStride, kvStride := heads*hd, kvHeads*hd
	load(t, sm, 0, q, (qs+mb*FlashM)*qStride+h*hd, qStride, lq-mb*FlashM, FlashM, tid)
	gpu.CpAsyncCommit(t)
	if ntiles > 0 {
		load(t, sm, qTile, k, ks*kvStride+kvh*hd, kvStride, lk, FlashN, tid)
		load(t, sm, qTile+2*kvTile, v, ks*kvStride+kvh*hd, kvStride, lk, FlashN, tid)
	}
	gpu.CpAsyncCommit(t)

	// Per-lane ldmatrix offsets (lane l addresses row l%8 of 8×8 matrix
	// l/8). Q as A: matrix i = rows 8·(i%2).., dims 8·(i/2)..; K as B
	// (non-trans): matrix i = keys 8·(i/2).., dims 8·(i%2)..; V as B
	// (trans): matrix i = keys 8·(i%2).., dims 8·(i/2)...
	mi, mj := lane>>3, lane&7
	qAddr := (t.Warp()*16+8*(mi&1)+mj)*ld + 8*(mi>>1)
	kAddr := (8*(mi>>1)+mj)*ld + 8*(mi&1)
	vAddr := (8*(mi&1)+mj)*ld + 8*(mi>>1)

	var o [32][4]float32 // O rows g, g+8: n-tile dt holds dims 8dt+2tig, +1 (gpu/mma.go's C layout)
	m := [2]float32{negInf(), negInf()}
	var l [2]float32
	for j := 0; j < ntiles; j++ {
		if j+1 < ntiles {
			nb := qTile + kvTile*((j+1)&1)
			off := (ks+(j+1)*FlashN)*kvStride + kvh*hd
			load(t, sm, nb, k, off, kvStride, lk-(j+1)*FlashN, FlashN, tid)
			load(t, sm, nb+2*kvTile, v, off, kvStride, lk-(j+1)*FlashN, FlashN, tid)
		}
		gpu.CpAsyncCommit(t)
		gpu.CpAsyncWait(t, 1) // tile j's group (and Q's) is complete
		t.Sync()
		kb := qTile + kvTile*(j&1)
		vb := kb + 2*kvTile

		// S = Q·Kᵀ: 16 k-steps of 16 dims, 4 n-tiles of 8 keys.
		var s [4][4]float32
		//kern:unroll
		for kk := 0; kk < hd/16; kk++ {
			a := gpu.LdMatrixX4(t, &sm[qAddr+16*kk])
			//kern:unroll
			for np := 0; np < 2; np++ {
				r := gpu.LdMatrixX4(t, &sm[kb+kAddr+16*np*ld+16*kk])
				s[2*np] = c.mma(t, a, [2]uint32{r[0], r[1]}, s[2*np])
				s[2*np+1] = c.mma(t, a, [2]uint32{r[2], r[3]}, s[2*np+1])
			}
		}
		// Mask keys past the sequence or past the diagonal, only in the
		// tiles that reach either. Element e of s is key k0 + 2·tig +
		// 8·(e/4) + e%2 of row (e/2)%2.
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
			for e := 0; e < 16; e++ {
				if int32(8*(e/4)+e%2) >= lim[(e/2)%2] {
					s[e/4][e%4] = negInf()
				}
			}
		}

		// Online softmax, rows g (r=0) and g+8 (r=1), the maximum kept
		// unscaled (the scale is positive), as in attnk.
		var p [2][4]uint32
		//kern:unroll
		for r := 0; r < 2; r++ {
			mx := m[r]
			//kern:unroll
			for nt := 0; nt < 4; nt++ {
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
			for nt := 0; nt < 4; nt++ {
				p0 := gpu.Exp2(gpu.FMA(s[nt][2*r], scaleLog2, -msub))
				p1 := gpu.Exp2(gpu.FMA(s[nt][2*r+1], scaleLog2, -msub))
				sum += p0 + p1
				// P's A fragment for k-step nt/2: a[r] from n-tile
				// 2kk, a[2+r] from n-tile 2kk+1.
				p[nt/2][r+2*(nt%2)] = c.pack(p0, p1)
			}
			l[r] = l[r]*alpha + sum
			//kern:unroll
			for dt := 0; dt < hd/8; dt++ {
				o[dt][2*r] *= alpha
				o[dt][2*r+1] *= alpha
			}
		}

		// O += P·V: 2 k-steps of 16 keys, 32 n-tiles of 8 dims.
		//kern:unroll
		for kk := 0; kk < 2; kk++ {
			a := p[kk]
			//kern:unroll
			for dp := 0; dp < hd/16; dp++ {
				r := gpu.LdMatrixX4Trans(t, &sm[vb+vAddr+16*kk*ld+16*dp])
				o[2*dp] = c.mma(t, a, [2]uint32{r[0], r[1]}, o[2*dp])
				o[2*dp+1] = c.mma(t, a, [2]uint32{r[2], r[3]}, o[2*dp+1])
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
			for dt := 0; dt < hd/8; dt++ { // a 32-bit store per pair (ob is even)
				gpu.Store2(out, ob+8*dt, [2]T{c.store(o[dt][2*r] * inv), c.store(o[dt][2*r+1] * inv)})
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

// load copies a tile of n rows × 256 elements (n = FlashM or FlashN, a
// constant at each call), row r at src[base + r·stride ...], into
// sm[dst + r·ld ...] with 16-byte cp.async copies (PTX ISA §9.7.9.25),
// n/4 per thread; rows ≥ rows are zero-filled without reading src.
//
// A row is 32 chunks of 16 bytes: thread tid copies chunk tid%32 of rows
// tid/32, +4, +8, ..., so a warp stores one whole row per copy, and its
// addresses are one base plus a constant (shared) or a running sum
// (global) per copy.
func load[T gpu.Elem](t gpu.Thread, sm []T, dst int, src []T, base, stride, rows, n, tid int) {
	const step = FlashWarp // rows per pass: 128 threads / 32 chunks
	r0, cc := tid>>5, tid&31
	d := dst + r0*ld + 8*cc
	g := base + r0*stride + 8*cc
	//kern:unroll
	for it := 0; it < FlashM/step; it++ {
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

func negInf() float32 { return math.Float32frombits(0xff800000) }
