package gemv3

// Version v3 of the decode GEMV (ops.Matmul with M ≤ 16 and W[N,K]
// while ops.GEMVv3 is set): v2's tensor-core product (ops/internal/gemvtc)
// with a grid sized to the machine.
//
//	out[i,j] = act(Σ_k x[i,k]·W[j,k] + bias[j]) + residual[i,j]   (SwiGLU as in Matmul)
//
// Why: v2 launches one block per 16 rows of W, so Qwen3-4B's o and down
// projections (N = 2560) are 160 blocks on an H100's 132 SMs: 28 SMs
// stream two tiles while 104 stream one and then idle, and the kernel
// takes the time of the busiest SM. v3 splits K so that the blocks deal
// evenly over the SMs (Splits, plan.go: 4 splits there, at most 1.25
// tiles of bytes per SM against a mean of 1.21), lays a warp's loads out
// so that each 128-byte line of W is requested whole by one warp, and
// reads W with streaming hints (gpu.Load8Stream: no L1 line, a 256-byte
// L2 fetch).
//
// The product (as v2, see gemvtc's package doc): mma.sync m16n8k16 with A
// = 16 rows of W and B = xᵀ; in a chunk of 32 columns of K, lane (g, q) =
// (l/4, l%4) loads elements 8q..8q+7 of W rows g and g+8 and of x row g
// (and g+8 for M > 8), one LDG.128 each, and those words are the mma's
// registers as loaded (a permutation of k applied to A and B alike leaves
// the sum unchanged). Rows of x past M clamp to row M-1, rows of W past N
// to row N-1; they only feed outputs that are never stored.
//
// Loads in flight: warp w of a block takes, per iteration, the unroll = 4
// consecutive chunks 4w…4w+3 of a group of 32 (v2 took chunks w, w+8,
// w+16, w+24): 4 × 16 rows × 64 bytes, two whole 128-byte lines per row
// of W, all issued before the iteration's first mma. That is 8 LDG.128 of
// W per lane (4 KiB per warp) and 4 of x (8 at M > 8) in flight per warp;
// 24 warps per SM at three blocks (the M ≤ 8 kernels, minblocks=3) keep
// 96 KiB of W in flight per SM, 64 KiB at two (M > 8), against the ~18 KiB
// that Little's law asks for (3.35 TB/s × ~0.7 µs / 132 SMs).
//
// Split K: the grid is tiles·splits blocks, block b taking tile b/splits
// and the chunks [s·C/S, (s+1)·C/S) of K's C chunks, s = b%splits (the
// splits of a tile are adjacent, so they run at the same time). A
// block's 8 warps meet in shared memory as in v2 (an XOR on the row of x
// keeps the stores conflict-free). Unsplit, the block finishes its
// columns with Matmul's epilogue. Split, it writes its raw float32 sums
// to partials[s][i][j]; after a barrier one thread fences
// (fence.acq_rel.gpu), bumps the tile's arrival counter and fences again;
// the block that arrives last adds the splits' partials for each output
// in split order 0…S-1, applies the epilogue and resets the counter to 0
// for the next launch. The sum is therefore the same whichever block
// arrives last: v3's result is deterministic for a given split count
// (which depends on the device's SM count), and there is no second
// kernel to launch.

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/epilogue"
	"github.com/gokern/kern/ops/internal/gemvdev"
)

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

//kern:kernel block=256 nobounds pdl
func gemv3F16F32(t gpu.Thread, out []float32, x, w []gpu.Half, bias, res, part []float32, cnt []uint32, m, n, k, act, splits int) {
	gemv3(gemvdev.TCHalf{}, epilogue.F32{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, part, cnt, m, n, k, act, splits, m > 8)
}

//kern:kernel block=256 nobounds pdl
func gemv3F16F16(t gpu.Thread, out []gpu.Half, x, w []gpu.Half, bias, res []gpu.Half, part []float32, cnt []uint32, m, n, k, act, splits int) {
	gemv3(gemvdev.TCHalf{}, epilogue.Half{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, part, cnt, m, n, k, act, splits, m > 8)
}

//kern:kernel block=256 nobounds pdl
func gemv3BF16F32(t gpu.Thread, out []float32, x, w []gpu.BFloat16, bias, res, part []float32, cnt []uint32, m, n, k, act, splits int) {
	gemv3(gemvdev.TCBFloat16{}, epilogue.F32{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, part, cnt, m, n, k, act, splits, m > 8)
}

//kern:kernel block=256 nobounds pdl
func gemv3BF16BF16(t gpu.Thread, out []gpu.BFloat16, x, w []gpu.BFloat16, bias, res []gpu.BFloat16, part []float32, cnt []uint32, m, n, k, act, splits int) {
	gemv3(gemvdev.TCBFloat16{}, epilogue.BFloat16{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, part, cnt, m, n, k, act, splits, m > 8)
}

// The narrow kernels take M ≤ 8 only (no second tile of x), at three
// blocks per SM as v2's.

//kern:kernel block=256 minblocks=3 nobounds pdl
func gemv3NarrowF16F32(t gpu.Thread, out []float32, x, w []gpu.Half, bias, res, part []float32, cnt []uint32, m, n, k, act, splits int) {
	gemv3(gemvdev.TCHalf{}, epilogue.F32{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, part, cnt, m, n, k, act, splits, false)
}

//kern:kernel block=256 minblocks=3 nobounds pdl
func gemv3NarrowF16F16(t gpu.Thread, out []gpu.Half, x, w []gpu.Half, bias, res []gpu.Half, part []float32, cnt []uint32, m, n, k, act, splits int) {
	gemv3(gemvdev.TCHalf{}, epilogue.Half{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, part, cnt, m, n, k, act, splits, false)
}

//kern:kernel block=256 minblocks=3 nobounds pdl
func gemv3NarrowBF16F32(t gpu.Thread, out []float32, x, w []gpu.BFloat16, bias, res, part []float32, cnt []uint32, m, n, k, act, splits int) {
	gemv3(gemvdev.TCBFloat16{}, epilogue.F32{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, part, cnt, m, n, k, act, splits, false)
}

//kern:kernel block=256 minblocks=3 nobounds pdl
func gemv3NarrowBF16BF16(t gpu.Thread, out []gpu.BFloat16, x, w []gpu.BFloat16, bias, res []gpu.BFloat16, part []float32, cnt []uint32, m, n, k, act, splits int) {
	gemv3(gemvdev.TCBFloat16{}, epilogue.BFloat16{}, t, gpu.DynShared[float32](t), out, x, w, bias, res, part, cnt, m, n, k, act, splits, false)
}

// Kernels are v3's kernels, indexed [input: f16, bf16][output: f32, the
// input type], like ops.Matmul's tables; Narrow the same for M ≤ 8.
var (
	Kernels = [2][2]*kern.Kernel{
		{gemv3F16F32Kernel.Kernel(), gemv3F16F16Kernel.Kernel()},
		{gemv3BF16F32Kernel.Kernel(), gemv3BF16BF16Kernel.Kernel()},
	}
	Narrow = [2][2]*kern.Kernel{
		{gemv3NarrowF16F32Kernel.Kernel(), gemv3NarrowF16F16Kernel.Kernel()},
		{gemv3NarrowBF16F32Kernel.Kernel(), gemv3NarrowBF16BF16Kernel.Kernel()},
	}
)

func gemv3[A gpu.Elem, O any, CA gemvdev.In[A], CO epilogue.Out[O]](ca CA, co CO, t gpu.Thread, red []float32,
	out []O, x, w []A, bias, res []O, part []float32, cnt []uint32, m, n, k, act, splits int, two bool) {
	b := t.BlockIdx().X
	tile, s := b/splits, b%splits
	n0 := tile * Rows
	l, wp := t.Lane(), t.Warp()
	g, q := l>>2, l&3
	// The lane's offsets at chunk 0 (32-bit: Matmul keeps every buffer
	// under 2³¹ elements).
	wa := int32(min(n0+g, n-1)*k + q*8)
	wb := int32(min(n0+g+8, n-1)*k + q*8)
	xa := int32(min(g, m-1)*k + q*8)
	xb := int32(min(g+8, m-1)*k + q*8)
	k32, q8 := int32(k), int32(q*8)
	nc := (k32 + 31) >> 5 // chunks of K
	c0 := int32(s) * nc / int32(splits)
	c1 := int32(s+1) * nc / int32(splits)
	full := min(c1, k32>>5) // the split's chunks wholly inside K end here
	var acc0, acc1 [4]float32
	c := c0 + int32(wp*unroll)
	for ; c+unroll-1 < full; c += group {
		var fa, fb, f0, f1 [unroll][4]uint32
		//kern:unroll
		for u := range unroll {
			kc := (c + int32(u)) << 5
			fa[u] = ca.Pack(gpu.Load8Stream(w, int(wa+kc)))
			fb[u] = ca.Pack(gpu.Load8Stream(w, int(wb+kc)))
			f0[u] = ca.Pack(gpu.Load8(x, int(xa+kc)))
			if two {
				f1[u] = ca.Pack(gpu.Load8(x, int(xb+kc)))
			}
		}
		acc0, acc1 = tcMMA(ca, t, acc0, acc1, fa, fb, f0, f1, two)
	}
	// The warp's last chunks: at most unroll of them are left below c1
	// (c+unroll-1 ≥ full ≥ c1-1), some of a lane's possibly past K (K is
	// a multiple of 8, so a lane's 8 elements are all in or all out).
	if c < c1 {
		var fa, fb, f0, f1 [unroll][4]uint32
		//kern:unroll
		for u := range unroll {
			kc := (c + int32(u)) << 5
			if c+int32(u) < c1 && kc+q8 < k32 {
				fa[u] = ca.Pack(gpu.Load8Stream(w, int(wa+kc)))
				fb[u] = ca.Pack(gpu.Load8Stream(w, int(wb+kc)))
				f0[u] = ca.Pack(gpu.Load8(x, int(xa+kc)))
				if two {
					f1[u] = ca.Pack(gpu.Load8(x, int(xb+kc)))
				}
			}
		}
		acc0, acc1 = tcMMA(ca, t, acc0, acc1, fa, fb, f0, f1, two)
	}

	// The warps' sums meet in shared memory: lane (g, q) holds D[g][2q],
	// D[g][2q+1] in acc[0..1] and D[g+8][..] in acc[2..3] (W rows g and
	// g+8), for rows 0–7 of x in acc0 and 8–15 in acc1; warp w stores D
	// (tile t, W row r, x row i) at w·256 + t·128 + r·8 + (i%8 ^ (r/4)%2),
	// 32 banks for the 32 lanes of a store.
	sw := (g >> 2) & 1
	//kern:unroll
	for e := range 4 {
		i := wp*256 + (g+8*(e>>1))*8 + ((2*q + e&1) ^ sw)
		red[i] = acc0[e]
		if two {
			red[i+128] = acc1[e]
		}
	}
	t.Sync()
	// Thread j owns output (row of x, column n0+r); warps 4–7 only hold
	// rows 8–15 of x (warp-uniform).
	j := wp*32 + l
	mine := wp < warps/2 || two
	r := (j & 127) >> 3
	row := (j>>7)*8 + (j&7 ^ (r>>2)&1)
	col := n0 + r
	var v float32
	if mine {
		v = red[j]
		//kern:unroll
		for i := 1; i < warps; i++ {
			v += red[i*256+j]
		}
	}
	last := true
	if splits > 1 { // block-uniform
		if mine && row < m && col < n {
			part[(s*m+row)*n+col] = v
		}
		// The hand-off of the PTX memory model (§8): the barrier orders the
		// block's partial stores (and its reads of red) before thread 0's
		// fence and arrival, a release at gpu scope; the arrival that sees
		// splits-1 earlier ones, then the fence, is the acquire of every
		// other block's release, and the second barrier orders this block's
		// loads of their partials after it.
		t.Sync()
		if j == 0 {
			gpu.ThreadFence(t)
			arrived := float32(0)
			if gpu.AtomicAdd(&cnt[tile], 1) == uint32(splits-1) {
				gpu.AtomicExch(&cnt[tile], 0) // ready for the next launch
				arrived = 1
			}
			gpu.ThreadFence(t)
			red[0] = arrived
		}
		t.Sync()
		last = red[0] != 0
		if last {
			v = 0
			if mine && row < m && col < n {
				for i := range splits {
					v += part[(i*m+row)*n+col]
				}
			}
		}
	}
	if last && mine {
		v1 := gpu.ShflXor(t, v, 8) // W row r^1: lane j^8
		// Even rows finish the pair; Pair checks the row and column.
		if r&1 == 0 {
			epilogue.Pair(co, out, bias, res, row, col, m, n, act, v, v1)
		}
	}
}

// tcMMA adds an iteration's chunks to the accumulators: per chunk two
// k16 steps, each one mma per tile of x.
func tcMMA[A any, CA gemvdev.In[A]](ca CA, t gpu.Thread, acc0, acc1 [4]float32, fa, fb, f0, f1 [unroll][4]uint32, two bool) ([4]float32, [4]float32) {
	//kern:unroll
	for u := range unroll {
		//kern:unroll
		for h := range 2 {
			a := [4]uint32{fa[u][2*h], fb[u][2*h], fa[u][2*h+1], fb[u][2*h+1]}
			acc0 = ca.MMA(t, a, [2]uint32{f0[u][2*h], f0[u][2*h+1]}, acc0)
			if two {
				acc1 = ca.MMA(t, a, [2]uint32{f1[u][2*h], f1[u][2*h+1]}, acc1)
			}
		}
	}
	return acc0, acc1
}
