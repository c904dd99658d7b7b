package qwen3

// The persistent decode layer's projections (mega.go): y = W·x for one
// input row, W [n, k] row-major in the model's 16-bit type, on the tensor
// cores, the whole grid sharing the rows.
//
// Work is cut into units of a 16-row tile of W and one of ks slices of
// its k columns; blocks take units in a grid-stride loop. Inside a unit
// the block's 16 warps take 32-column chunks of the slice round robin,
// megaUnroll chunks an iteration, so a lane has 2·megaUnroll 128-bit
// weight loads in flight. Lane (g, q) = (lane/4, lane%4) loads columns
// 8q … 8q+7 of a chunk from rows g and g+8: that is an m16n8k16 A
// fragment for two k-steps if k is permuted within the chunk (logical k
// 2q, 2q+1, 2q+8, 2q+9 of step s are columns 8q+4s … 8q+4s+3), and the
// B fragment takes x through the same permutation, in column 0 only
// (lanes with g = 0), so the sum of row g lands in c[0] of lane 4g and
// that of row g+8 in c[2]. The warps' sums meet in shared memory, summed
// in warp order; with ks > 1 each slice's tile sum goes to a scratch row,
// and the last slice of a tile to arrive (an arrival counter per tile)
// sums the slices in slice order: the bits do not depend on which block
// ran what, or when.

import "github.com/gokern/kern/gpu"

// mcodec is the persistent layer's 16-bit element type: scodec's rounding,
// the widening back to float32, the packing of eight elements (one
// 128-bit load) into four mma registers, lower element in the low half,
// and the type's m16n8k16 mma.
type mcodec[T gpu.Elem] interface {
	scodec[T]
	load(T) float32
	pack(v [8]T) [4]uint32
	mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32
}

func (bf16w) pack(v [8]gpu.BFloat16) [4]uint32 {
	return [4]uint32{gpu.PackBFloat162(v[0], v[1]), gpu.PackBFloat162(v[2], v[3]), gpu.PackBFloat162(v[4], v[5]), gpu.PackBFloat162(v[6], v[7])}
}

func (f16w) pack(v [8]gpu.Half) [4]uint32 {
	return [4]uint32{gpu.PackHalf2(v[0], v[1]), gpu.PackHalf2(v[2], v[3]), gpu.PackHalf2(v[4], v[5]), gpu.PackHalf2(v[6], v[7])}
}

func (bf16w) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMABF16(t, a, b, c)
}

func (f16w) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMAF16(t, a, b, c)
}

// What a projection does with row r's sum v.
const (
	megaStore    = 0 // out[r] = v
	megaResidual = 1 // out[r] = res[r] + v
	megaSwiGLU   = 2 // rows 2j, 2j+1 are gate_j, up_j: act[j] = silu(gate)·up, rounded to T
)

// megaChunk32 multiplies one 32-column chunk: rows g and g+8 (wa, wb) by
// the sequences' inputs (xb, zero where the lane's column is past the
// step's sequences: mask).
func megaChunk32[T gpu.Elem, C mcodec[T]](cd C, t gpu.Thread, wa, wb, xb [4]uint32, mask uint32, acc [4]float32) [4]float32 {
	acc = cd.mma(t, [4]uint32{wa[0], wb[0], wa[1], wb[1]}, [2]uint32{xb[0] & mask, xb[1] & mask}, acc)
	return cd.mma(t, [4]uint32{wa[2], wb[2], wa[3], wb[3]}, [2]uint32{xb[2] & mask, xb[3] & mask}, acc)
}

// megaGEMV runs one projection over the grid for S ≤ 8 sequences: W
// [n, k] (n a multiple of 16, k of 32; mega.go's megaFits) times the
// rows of xs [S, kp], the block's shared copy of the inputs (kp is
// megaRow's, so the eight rows' loads fall in different banks).
// Sequence j is column j of the mma's B and C, so its sums are the same
// bits whatever S is. red is the block's warp sums [16 warps][8][16
// rows, megaRed apart], sv a shared [2·8·16] for SwiGLU's pairs, part and
// cnt the grid's slice scratch [n/16·ks·S·16] and arrival counters
// [n/16] (zero on entry, left zero), flag two shared words. out, res and
// act are [S, n], [S, n] and [S, n/2].
//
// With pair (planMega sets it where a slice is short enough), each half
// of the block's warps takes a unit of its own, units u and u + grid, so
// a block with several units walks half as many rounds of round trips;
// threads 0–127 finish the first half's unit, 128–255 the second's.
func megaGEMV[T gpu.Elem, C mcodec[T]](cd C, t gpu.Thread, w, xs []T, red, sv, part []float32, cnt, flag []int32, S, n, k, kp, ks, mode int, pair bool, out, res []float32, act []T) {
	warp, lane, tid := t.Warp(), t.Lane(), t.ThreadIdx().X
	g, q := lane>>2, lane&3
	mask := uint32(0)
	if g < S {
		mask = 0xffffffff
	}
	xrow := min(g, S-1) * kp // lanes past S read row S-1 and mask it
	chunks := k >> 5
	per := (chunks + ks - 1) / ks
	units := (n >> 4) * ks
	grid := t.GridDim().X
	// A warp's half (its unit) and its place in it; a finishing thread's
	// half. Without pair there is one half of 16 warps.
	half, wh, nw, fh, step := 0, warp, megaWarps, 0, grid
	if pair {
		half, wh, nw, fh, step = warp>>3, warp&7, megaWarps/2, min(tid>>7, 1), 2*grid
	}
	// Thread tid finishes row r of sequence seq of its half's unit:
	// eight sequences a row, so a warp's reads of red (row stride
	// megaRed) hit 32 banks.
	seq, r := tid&7, (tid>>3)&15
	for u0 := t.BlockIdx().X; u0 < units; u0 += step {
		// The block's next units into L2 while these stream: their loads
		// then wait an L2 round trip, not a DRAM one.
		for nu := u0 + step; nu < min(units, u0+2*step); nu += grid {
			megaPrefetchUnit(t, w, k, ks, per, nu)
		}
		u, uf := u0+half*grid, u0+fh*grid // the warp's unit, the finisher's
		fin := seq < S && (tid < 128 || pair && tid < 256) && uf < units
		tile, s := u/ks, u%ks
		c1 := min((s+1)*per, chunks)
		if u >= units {
			c1 = 0 // a half with no unit this round loads nothing
		}
		wa := (tile*16+g)*k + 8*q
		wb := wa + 8*k
		tf := uf / ks
		// The residual is read now, in flight with the weights, rather
		// than after the sums: a round trip off the phase's chain.
		rv := float32(0)
		if fin && mode == megaResidual {
			rv = res[seq*n+tf*16+r]
		}
		var acc [4]float32
		// Every load of an iteration before its first product; a slice's
		// last iteration loads what is left (a chunk past the slice is
		// zero and adds nothing), so a warp with fewer than megaUnroll
		// chunks still has them all in flight at once.
		for c := s*per + wh; c < c1; c += megaUnroll * nw {
			var fa, fb, xb [megaUnroll][4]uint32
			//kern:unroll
			for e := range megaUnroll {
				if cc := c + e*nw; cc < c1 {
					off := cc << 5
					fa[e] = cd.pack(gpu.Load8Stream(w, wa+off))
					fb[e] = cd.pack(gpu.Load8Stream(w, wb+off))
					xb[e] = cd.pack(gpu.Load8(xs, xrow+off+8*q))
				}
			}
			//kern:unroll
			for e := range megaUnroll {
				acc = megaChunk32(cd, t, fa[e], fb[e], xb[e], mask, acc)
			}
		}
		// c[0], c[1]: row g, sequences 2q, 2q+1; c[2], c[3]: row g+8.
		// A sequence's 16 rows at a stride of megaRed words put each
		// store's 32 lanes in 32 banks.
		red[(warp*8+2*q)*megaRed+g], red[(warp*8+2*q+1)*megaRed+g] = acc[0], acc[1]
		red[(warp*8+2*q)*megaRed+g+8], red[(warp*8+2*q+1)*megaRed+g+8] = acc[2], acc[3]
		t.Sync()
		v := float32(0)
		if fin {
			// Unrolled, so the shared loads are in flight together; summed
			// in warp order.
			//kern:unroll
			for i := range megaWarps {
				if i < nw {
					v += red[((fh*nw+i)*8+seq)*megaRed+r]
				}
			}
		}
		last := true
		if ks > 1 {
			if fin {
				part[(uf*S+seq)*16+r] = v
				gpu.ThreadFence(t) // the partial before the arrival
			}
			t.Sync()
			if tid == 0 || pair && tid == 128 {
				// Thread 0 arrives for the first half's unit, thread 128
				// (with pair) for the second's, if it has one.
				hu := u0 + (tid>>7)*grid
				arrived := int32(0)
				if hu < units {
					if gpu.AtomicAdd(&cnt[hu/ks], 1) == int32(ks-1) {
						arrived, cnt[hu/ks] = 1, 0
					}
				}
				flag[tid>>7] = arrived
			}
			t.Sync()
			last = flag[fh] != 0
			gpu.ThreadFence(t) // the other slices' partials after their arrivals
			if fin && last {
				// Every slice's partial loaded before the first add (one
				// round trip, not ks), then summed in slice order.
				var ps [megaMaxKs]float32
				//kern:unroll
				for j := range megaMaxKs {
					if j < ks {
						ps[j] = part[((tf*ks+j)*S+seq)*16+r]
					}
				}
				v = 0
				//kern:unroll
				for j := range megaMaxKs {
					if j < ks {
						v += ps[j]
					}
				}
			}
		}
		row := tf*16 + r
		if mode == megaSwiGLU {
			// The up row's sum from its neighbour, through shared memory.
			if fin && last {
				sv[tid] = v
			}
			t.Sync()
			if fin && last && r&1 == 0 {
				act[seq*(n>>1)+row>>1] = cd.store(v / (1 + gpu.Exp(-v)) * sv[tid+8])
			}
		} else if fin && last {
			if mode == megaResidual {
				v += rv
			}
			out[seq*n+row] = v
		}
		t.Sync() // red, sv and flag are read before the next round writes them
	}
}

// megaPrefetch asks L2 for the weights of the block's first units units
// of a projection (W [n, k] in ks slices, as megaGEMV will take them),
// one 128-byte line per thread at a time. Called before a grid barrier,
// it keeps DRAM streaming while the grid meets, and the next phase finds
// its first loads in L2; the lines of a slice's odd last chunk spill
// into the next slice or row, which is harmless (a hint, and clamped to
// w by gpu.PrefetchL2).
func megaPrefetch[T gpu.Elem](t gpu.Thread, w []T, n, k, ks, units int) {
	per := ((k >> 5) + ks - 1) / ks // chunks a slice
	for j := 0; j < units; j++ {
		u := t.BlockIdx().X + j*t.GridDim().X
		if u >= (n>>4)*ks {
			break
		}
		megaPrefetchUnit(t, w, k, ks, per, u)
	}
}

// megaPrefetchUnit asks L2 for unit u's weights: 16 rows of W [·, k]
// times slice u%ks of per 32-column chunks, a 128-byte line a thread.
func megaPrefetchUnit[T gpu.Elem](t gpu.Thread, w []T, k, ks, per, u int) {
	lines := int32((per + 1) >> 1) // two 32-column chunks a line
	base := (u/ks)*16*k + (u%ks)*per*32
	for e := int32(t.ThreadIdx().X); e < 16*lines; e += megaThreads {
		gpu.PrefetchL2(w, base+int(e/lines)*k+int(e%lines)*64)
	}
}
