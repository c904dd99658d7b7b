package mmh

// The Hopper GEMM: C = A·Wᵀ with A [M, K] and W [N, K] row-major (a linear
// layer), or C = A·B with B [K, N] row-major (the GemmKN kernels, gemm_kn.go:
// B is an MN-major wgmma operand), f16 or bf16 in, f32 accumulation, the
// epilogue of ops.Matmul fused into the store.
//
// Persistent: the grid is at most one block per SM, and block b computes
// output tiles b, b + gridDim, … (tile t is row t / tilesN, column
// t % tilesN). The producer runs ahead across tile boundaries, so the
// next tile's loads overlap this tile's last wgmmas and its epilogue.
//
// Block tile BM×BN×BK = 128×128×64, 384 threads in three warpgroups:
//
//	warpgroup 0  producer: setmaxnreg.dec to 40; one thread issues, per k
//	             tile, the TMA copies of A's 128×64 and W's 128×64 boxes
//	             into a free stage, announcing their 32 KiB on the stage's
//	             "full" mbarrier
//	warpgroups   consumers: setmaxnreg.inc to 232; warpgroup c multiplies
//	1, 2         rows 64(c-1)..64(c-1)+63 of the tile by all 128 columns:
//	             per k tile, wait "full", four m64n128k16 wgmmas (k16
//	             slices of the stage), commit, keep one group in flight
//	             (wait_group 1), then release the previous stage on its
//	             "empty" mbarrier (one arrival per consumer warp, 8 in all);
//	             after a tile's last k step, retire everything, release the
//	             last stage and run the epilogue
//
// Shared memory, dynamic: stages × (A box 16 KiB | W box 16 KiB), each box
// 128 rows of 128 bytes in the 128-byte swizzle that TMA writes and wgmma
// reads (K-major, SBO 1024: eight rows per swizzle atom), then 4 KiB of
// epilogue staging per consumer warp (EpiBytes); the mbarriers are static.
// The stage count is a launch argument (ops picks 4 where the device
// allows, 2 in the emulator's 99 KiB). Stage use u (counted across tiles)
// is stage u % stages, and its barriers' phase parity (u / stages) & 1.
//
// Edges: TMA zero-fills the parts of a box outside the tensor (rows past M
// or N, columns past K) and still counts the whole box's bytes, so the
// main loop has no predicates; the epilogue stores with a predicate per
// element (epilogue.go, ops/internal/epilogue's Pair and One). K must be a multiple of 8 (a 16-byte
// row stride, the tensor map's rule).
//
// Accumulator layout (PTX ISA §9.7.15, m64nNk16 D fragments): in warp w of
// a consumer warpgroup, acc[4j+e] is D[16w + lane/4 + 8(e/2)][8j + 2(lane%4) + e%2].

import "github.com/gokern/kern/gpu"

// Tile shape and pipeline constants (see the header).
const (
	BM        = 128
	BN        = 128
	BK        = 64
	Threads   = 384
	MaxStages = 4
	boxA      = BM * BK // elements of one stage's A box
	boxB      = BN * BK
	// StageBytes is the dynamic shared memory of one stage.
	StageBytes = (boxA + boxB) * 2
	// EpiBytes is the dynamic shared memory of the epilogue staging.
	EpiBytes = consumerWarps * epiWarpFloats * 4
	// Box is the TMA box of both operands: BK elements (128 bytes) by 128 rows.
	BoxK, BoxRows = BK, BM
	// KNBoxN is the columns of one TMA box of B [K, N] (gemm_kn.go): 128
	// bytes, the swizzle's width; its rows are BoxK.
	KNBoxN        = 64
	producerRegs  = 40
	consumerRegs  = 232
	consumerWarps = 8
)

// SharedBytes is the dynamic shared memory of a launch with the given
// stage count.
func SharedBytes(stages int) int { return stages*StageBytes + EpiBytes }

// The kernels, one per (input, output) type: c [m, n] (or [m, n/2] with
// SwiGLU), amap and wmap the tensor maps of a [m, k] and w [n, k] (box
// BoxK×BoxRows, 128-byte swizzle), bias [n] or empty, res like c or empty,
// act an Epi* activation, stages the pipeline depth (2..MaxStages; the
// dynamic shared memory is SharedBytes(stages)).

//kern:kernel block=384 minblocks=1 nobounds
func GemmF16F32(t gpu.Thread, c []float32, amap, wmap []uint64, bias, res []float32, m, n, k, act, stages int) {
	gemm(false, false, f32c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[float32](t), c, amap, wmap, bias, res, m, n, k, act, stages)
}

//kern:kernel block=384 minblocks=1 nobounds
func GemmF16F16(t gpu.Thread, c []gpu.Half, amap, wmap []uint64, bias, res []gpu.Half, m, n, k, act, stages int) {
	gemm(false, false, f16c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[float32](t), c, amap, wmap, bias, res, m, n, k, act, stages)
}

//kern:kernel block=384 minblocks=1 nobounds
func GemmBF16F32(t gpu.Thread, c []float32, amap, wmap []uint64, bias, res []float32, m, n, k, act, stages int) {
	gemm(true, false, f32c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[float32](t), c, amap, wmap, bias, res, m, n, k, act, stages)
}

//kern:kernel block=384 minblocks=1 nobounds
func GemmBF16BF16(t gpu.Thread, c []gpu.BFloat16, amap, wmap []uint64, bias, res []gpu.BFloat16, m, n, k, act, stages int) {
	gemm(true, false, bf16c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[float32](t), c, amap, wmap, bias, res, m, n, k, act, stages)
}

// gemm is the body of every kernel; see the file header. bf16 selects the
// wgmma input type and kn the layout of the second operand, W [N, K]
// (false) or B [K, N] (true, gemm_kn.go): constants in each kernel.
func gemm[A gpu.Elem, O any, CO quadCodec[O]](bf16, kn bool, co CO, t gpu.Thread, sm []A, sf []float32, c []O, amap, wmap []uint64, bias, res []O, m, n, k, act, stages int) {
	full := gpu.Shared[uint64](t, MaxStages)
	empty := gpu.Shared[uint64](t, MaxStages)
	tid := t.ThreadIdx().X
	if tid == 0 {
		for s := 0; s < stages; s++ {
			gpu.MbarrierInit(t, &full[s], 1)
			gpu.MbarrierInit(t, &empty[s], consumerWarps)
		}
		// The TMA unit completes bytes on these barriers through the async
		// proxy: make the generic-proxy initialisation visible to it.
		gpu.FenceProxyAsync(t)
	}
	t.Sync()
	// Loop state is int32: Go's int would make every counter and compare
	// a 64-bit pair in SASS.
	ktiles, nst := int32((k+BK-1)/BK), int32(stages)
	tilesN := int32((n + BN - 1) / BN)
	tiles := int32((m+BM-1)/BM) * tilesN
	first, step := int32(t.BlockIdx().X), int32(t.GridDim().X)
	wg := t.Warp() / 4 // warp-uniform: the warpgroup
	if wg == 0 {
		gpu.SetMaxNRegDec(t, producerRegs)
		if tid == 0 && len(amap) >= gpu.TensorMapWords && len(wmap) >= gpu.TensorMapWords {
			produce(kn, t, sm, amap, wmap, full, empty, first, step, tiles, tilesN, ktiles, nst)
		}
		return
	}
	gpu.SetMaxNRegInc(t, consumerRegs)
	// The consumer's A rows start 64 rows (8 KiB, a multiple of the
	// 1024-byte swizzle atom) into each A box. SBO 1024 bytes: the next
	// eight rows; LBO is unused by a K-major swizzled operand whose k16
	// slice (32 bytes) lies inside a swizzled row, 0 as in Triton 3.9's
	// sm_90 matmul (descriptor high word 0x40000040 in both).
	da := gpu.WGMMADesc(t, &sm[(wg-1)*64*BK], 0, 1024, gpu.Swizzle128B)
	db := gpu.WGMMADesc(t, &sm[stages*boxA], 0, 1024, gpu.Swizzle128B)
	bstep := uint32(2) // a k16 slice: 32 bytes on inside the swizzled rows
	if kn {
		// B [K, N]: MN-major, LBO the second 64-column box, SBO the next
		// eight k rows; a k16 slice is 16 rows of 128 bytes (gemm_kn.go).
		db = gpu.WGMMADesc(t, &sm[stages*boxA], KNBoxN*BK*2, 1024, gpu.Swizzle128B)
		bstep = 16 * 128 / 16
	}
	// The stage and k16 offsets are added to the low words only: the
	// start address field (bits 0-13, shared address >> 4) of a stage
	// below 256 KiB never carries into the rest, and 32-bit adds keep the
	// high words (SBO, swizzle mode) constants.
	daLo, daHi, dbLo, dbHi := uint32(da), da&^0xffffffff, uint32(db), db&^0xffffffff
	lane0 := t.Lane() == 0
	st := sf[stages*(StageBytes/4)+(t.Warp()-4)*epiWarpFloats:]
	s, phase := int32(0), 0
	for tile := first; tile < tiles; tile += step {
		var acc [64]float32
		prev := int32(0)
		for kt := int32(0); kt < ktiles; kt++ {
			for !gpu.MbarrierTryWait(t, &full[s], phase) {
			}
			// Descriptor addresses are in 16-byte units: a stage is boxA·2/16.
			so := uint32(s) * (boxA * 2 / 16)
			gpu.WGMMAFence(t)
			if kn && bf16 {
				//kern:unroll
				for ks := range BK / 16 {
					gpu.WGMMABF16Major(t, &acc, daHi|uint64(daLo+so+uint32(2*ks)), dbHi|uint64(dbLo+so+bstep*uint32(ks)), true, gpu.KMajor, gpu.MNMajor)
				}
			} else if kn {
				//kern:unroll
				for ks := range BK / 16 {
					gpu.WGMMAF16Major(t, &acc, daHi|uint64(daLo+so+uint32(2*ks)), dbHi|uint64(dbLo+so+bstep*uint32(ks)), true, gpu.KMajor, gpu.MNMajor)
				}
			} else if bf16 {
				//kern:unroll
				for ks := range BK / 16 {
					gpu.WGMMABF16(t, &acc, daHi|uint64(daLo+so+uint32(2*ks)), dbHi|uint64(dbLo+so+uint32(2*ks)), true)
				}
			} else {
				//kern:unroll
				for ks := range BK / 16 {
					gpu.WGMMAF16(t, &acc, daHi|uint64(daLo+so+uint32(2*ks)), dbHi|uint64(dbLo+so+uint32(2*ks)), true)
				}
			}
			gpu.WGMMACommitGroup(t)
			// Keep this k tile's group in flight; the previous one has
			// finished reading its stage, which goes back to the producer.
			gpu.WGMMAWaitGroup(t, 1)
			// On a GPU the warp is converged here (wait_group is
			// .sync.aligned) and this costs nothing; native mode runs lanes
			// as goroutines and needs it before lane 0 speaks for the warp.
			t.SyncWarp()
			if kt > 0 && lane0 {
				gpu.MbarrierArrive(t, &empty[prev])
			}
			prev = s
			s++
			if s == nst {
				s, phase = 0, phase^1
			}
		}
		gpu.WGMMAWaitGroup(t, 0)
		t.SyncWarp()
		if ktiles > 0 && lane0 {
			gpu.MbarrierArrive(t, &empty[prev])
		}
		m0, n0 := int(tile/tilesN)*BM, int(tile%tilesN)*BN
		epilogue(co, t, st, acc, c, bias, res, m0+(wg-1)*64, n0, m, n, act)
	}
}

// produce is the producer thread's loop over the block's tiles and their
// k tiles: wait until the consumers released the stage's previous use,
// announce the bytes of both operands on "full", and issue the copies
// (two, or three with B [K, N]: its 128 columns are two 64-column boxes).
func produce[A gpu.Elem](kn bool, t gpu.Thread, sm []A, amap, wmap []uint64, full, empty []uint64, first, step, tiles, tilesN, ktiles, stages int32) {
	s, phase, used := int32(0), 0, int32(0)
	for tile := first; tile < tiles; tile += step {
		m0, n0 := int(tile/tilesN)*BM, int(tile%tilesN)*BN
		for kt := int32(0); kt < ktiles; kt++ {
			if used >= stages {
				// Use u of stage s waits for the consumers' release of use
				// u-1: that phase's parity is (u-1)&1 = phase^1.
				for !gpu.MbarrierTryWait(t, &empty[s], phase^1) {
				}
			}
			gpu.MbarrierArriveExpectTx(t, &full[s], StageBytes)
			gpu.TMALoad2D(t, &sm[s*boxA], &amap[0], int(kt)*BK, m0, &full[s])
			if kn {
				gpu.TMALoad2D(t, &sm[stages*boxA+s*boxB], &wmap[0], n0, int(kt)*BK, &full[s])
				gpu.TMALoad2D(t, &sm[stages*boxA+s*boxB+KNBoxN*BK], &wmap[0], n0+KNBoxN, int(kt)*BK, &full[s])
			} else {
				gpu.TMALoad2D(t, &sm[stages*boxA+s*boxB], &wmap[0], int(kt)*BK, n0, &full[s])
			}
			used++
			s++
			if s == stages {
				s, phase = 0, phase^1
			}
		}
	}
}
