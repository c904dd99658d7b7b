package mmhw

// The wide-tile Hopper GEMM: C = A·Wᵀ with A [M, K] and W [N, K]
// row-major (a linear layer), f16 or bf16 in, f32 accumulation, the
// epilogue of ops.Matmul fused into the store. The pipeline is
// ops/internal/mmh's (see its gemm.go); what differs is the tile and the
// order of the tiles.
//
// Block tile BM×BN×BK = 128×256×64, 384 threads in three warpgroups:
//
//	warpgroup 0  producer: setmaxnreg.dec to 40; one thread issues, per k
//	             tile, the TMA copies of A's 128×64 box and W's two
//	             128×64 boxes (rows n0 and n0+128) into a free stage,
//	             announcing their 48 KiB on the stage's "full" mbarrier
//	warpgroups   consumers: setmaxnreg.inc to 232; warpgroup c multiplies
//	1, 2         rows 64(c-1)..64(c-1)+63 of the tile by all 256 columns:
//	             per k tile four m64n256k16 wgmmas, commit, wait_group 1,
//	             release the previous stage (one arrival per consumer
//	             warp); 128 accumulator registers a thread
//
// Why 256 columns: per k16 step a consumer warpgroup reads its 64×16 A
// slice (2 KiB) and the 256×16 W slice (8 KiB) from shared memory for
// 262,144 multiply-adds, where mmh's m64n128k16 reads 2 + 4 KiB for
// 131,072: a sixth fewer shared-memory bytes per MAC. Per k tile the TMA
// brings 48 KiB for 2·128·256·64 FLOP against mmh's 32 KiB for half
// that: a quarter less L2 → SM traffic per FLOP. And each wgmma is twice
// as long, so the per-k-tile costs (barrier wait, fence, commit,
// wait_group, release) are spread over twice the math. CUTLASS's fastest
// sm_90 bf16 kernels use this tile.
//
// Tile order: tile t of a block's persistent walk is, with G = group,
// in strip t / (G·tilesN) of G tile rows, and inside the strip the rows
// vary fastest: (row, col) = (G·strip + i % rows, i / rows), i = t mod
// G·tilesN, rows = G or what is left of tilesM. The ~132 tiles in flight
// at once then cover about G rows × 132/G columns instead of 132/tilesN
// whole rows, so at 4096³ (G 16) they read 2048 rows of A and 2112 of W
// per k tile rather than 1056 and all 4096 of W. group = 1 is the
// row-major order of mmh (t / tilesN, t % tilesN).
//
// Shared memory, dynamic: stages × A box 16 KiB, then stages × W box
// 32 KiB (both in the 128-byte swizzle, K-major, SBO 1024), then 4 KiB of
// epilogue staging per consumer warp. Four stages are 192 KiB, with the
// staging 224 KiB, within an H100's 227 KiB per block (ops picks the
// stage count from the device; the emulator must be opened with sm_90's
// limit: two stages and the staging are 128 KiB).
//
// Edges: TMA zero-fills box parts outside the tensor (a W box wholly past
// N included) and counts the whole box's bytes; the epilogue predicates
// each store. K must be a multiple of 8 (the tensor map's 16-byte row
// stride).
//
// Accumulator layout (PTX ISA §9.7.15, m64nNk16 D fragments): in warp w of
// a consumer warpgroup, acc[4j+e] is D[16w + lane/4 + 8(e/2)][8j + 2(lane%4) + e%2].

import "github.com/gokern/kern/gpu"

// Tile shape and pipeline constants (see the header).
const (
	BM        = 128
	BN        = 256
	BK        = 64
	Threads   = 384
	MaxStages = 4
	boxA      = BM * BK // elements of one stage's A box
	boxB      = BN * BK // elements of one stage's W (two TMA boxes)
	// StageBytes is the dynamic shared memory of one stage.
	StageBytes = (boxA + boxB) * 2
	// EpiBytes is the dynamic shared memory of the epilogue staging.
	EpiBytes = consumerWarps * epiWarpFloats * 4
	// The TMA box of both operands: BK elements (128 bytes) by 128 rows;
	// a stage's W is two of them.
	BoxK, BoxRows = BK, 128
	// Group is the tile rows of a strip ops launches with (see the header).
	Group         = 16
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
// dynamic shared memory is SharedBytes(stages)), group the tile rows of a
// strip (≥ 1; 1 is row-major).

//kern:kernel block=384 minblocks=1 nobounds
func GemmF16F32(t gpu.Thread, c []float32, amap, wmap []uint64, bias, res []float32, m, n, k, act, stages, group int) {
	gemm(false, f32c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[float32](t), c, amap, wmap, bias, res, m, n, k, act, stages, group)
}

//kern:kernel block=384 minblocks=1 nobounds
func GemmF16F16(t gpu.Thread, c []gpu.Half, amap, wmap []uint64, bias, res []gpu.Half, m, n, k, act, stages, group int) {
	gemm(false, f16c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[float32](t), c, amap, wmap, bias, res, m, n, k, act, stages, group)
}

//kern:kernel block=384 minblocks=1 nobounds
func GemmBF16F32(t gpu.Thread, c []float32, amap, wmap []uint64, bias, res []float32, m, n, k, act, stages, group int) {
	gemm(true, f32c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[float32](t), c, amap, wmap, bias, res, m, n, k, act, stages, group)
}

//kern:kernel block=384 minblocks=1 nobounds
func GemmBF16BF16(t gpu.Thread, c []gpu.BFloat16, amap, wmap []uint64, bias, res []gpu.BFloat16, m, n, k, act, stages, group int) {
	gemm(true, bf16c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[float32](t), c, amap, wmap, bias, res, m, n, k, act, stages, group)
}

// gemm is the body of every kernel; see the file header. bf16 selects the
// wgmma input type (a constant in each kernel).
func gemm[A gpu.Elem, O any, CO quadCodec[O]](bf16 bool, co CO, t gpu.Thread, sm []A, sf []float32, c []O, amap, wmap []uint64, bias, res []O, m, n, k, act, stages, group int) {
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
	tilesM, tilesN := int32((m+BM-1)/BM), int32((n+BN-1)/BN)
	tiles, grp := tilesM*tilesN, int32(group)
	if grp < 1 {
		grp = 1
	}
	first, step := int32(t.BlockIdx().X), int32(t.GridDim().X)
	wg := t.Warp() / 4 // warp-uniform: the warpgroup
	if wg == 0 {
		gpu.SetMaxNRegDec(t, producerRegs)
		if tid == 0 && len(amap) >= gpu.TensorMapWords && len(wmap) >= gpu.TensorMapWords {
			produce(t, sm, amap, wmap, full, empty, first, step, tilesM, tilesN, grp, ktiles, nst)
		}
		return
	}
	gpu.SetMaxNRegInc(t, consumerRegs)
	// The consumer's A rows start 64 rows (8 KiB, a multiple of the
	// 1024-byte swizzle atom) into each A box; W's 256 rows are its two
	// boxes back to back, one K-major operand of 32 atoms. SBO 1024 bytes:
	// the next eight rows; LBO unused (0) by a K-major 128-byte-swizzled
	// operand whose k16 slice (32 bytes) lies inside a swizzled row.
	da := gpu.WGMMADesc(t, &sm[(wg-1)*64*BK], 0, 1024, gpu.Swizzle128B)
	db := gpu.WGMMADesc(t, &sm[stages*boxA], 0, 1024, gpu.Swizzle128B)
	// The stage and k16 offsets are added to the low words only: the
	// start address field (bits 0-13, shared address >> 4) below 256 KiB
	// never carries into the rest, and 32-bit adds keep the high words
	// (SBO, swizzle mode) constants.
	daLo, daHi, dbLo, dbHi := uint32(da), da&^0xffffffff, uint32(db), db&^0xffffffff
	lane0 := t.Lane() == 0
	st := sf[stages*(StageBytes/4)+(t.Warp()-4)*epiWarpFloats:]
	s, phase := int32(0), 0
	for tile := first; tile < tiles; tile += step {
		var acc [128]float32
		prev := int32(0)
		for kt := int32(0); kt < ktiles; kt++ {
			for !gpu.MbarrierTryWait(t, &full[s], phase) {
			}
			// Descriptor addresses are in 16-byte units.
			sa, sb := uint32(s)*(boxA*2/16), uint32(s)*(boxB*2/16)
			gpu.WGMMAFence(t)
			if bf16 {
				//kern:unroll
				for ks := range BK / 16 {
					gpu.WGMMABF16(t, &acc, daHi|uint64(daLo+sa+uint32(2*ks)), dbHi|uint64(dbLo+sb+uint32(2*ks)), true)
				}
			} else {
				//kern:unroll
				for ks := range BK / 16 {
					gpu.WGMMAF16(t, &acc, daHi|uint64(daLo+sa+uint32(2*ks)), dbHi|uint64(dbLo+sb+uint32(2*ks)), true)
				}
			}
			gpu.WGMMACommitGroup(t)
			// Keep this k tile's group in flight; the previous one has
			// finished reading its stage, which goes back to the producer.
			gpu.WGMMAWaitGroup(t, 1)
			// Converged on a GPU (wait_group is .sync.aligned); native mode
			// runs lanes as goroutines and needs it before lane 0 speaks
			// for the warp.
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
		tm, tn := tileAt(tile, tilesM, tilesN, grp)
		epilogue(co, t, st, acc, c, bias, res, int(tm)*BM+(wg-1)*64, int(tn)*BN, m, n, act)
	}
}

// tileAt is the tile row and column of the block's tile t in the grouped
// order (see the header): strips of group tile rows, rows fastest inside
// a strip; the last strip has what is left of tilesM.
func tileAt(t, tilesM, tilesN, group int32) (int32, int32) {
	per := group * tilesN
	strip := t / per
	r0 := strip * group
	rows := tilesM - r0
	if rows > group {
		rows = group
	}
	i := t - strip*per
	return r0 + i%rows, i / rows
}

// produce is the producer thread's loop over the block's tiles and their
// k tiles: wait until the consumers released the stage's previous use,
// announce the bytes of A's box and W's two boxes on "full", and issue
// the three copies.
func produce[A gpu.Elem](t gpu.Thread, sm []A, amap, wmap []uint64, full, empty []uint64, first, step, tilesM, tilesN, group, ktiles, stages int32) {
	s, phase, used := int32(0), 0, int32(0)
	tiles := tilesM * tilesN
	for tile := first; tile < tiles; tile += step {
		tm, tn := tileAt(tile, tilesM, tilesN, group)
		m0, n0 := int(tm)*BM, int(tn)*BN
		for kt := int32(0); kt < ktiles; kt++ {
			if used >= stages {
				// Use u of stage s waits for the consumers' release of use
				// u-1: that phase's parity is (u-1)&1 = phase^1.
				for !gpu.MbarrierTryWait(t, &empty[s], phase^1) {
				}
			}
			gpu.MbarrierArriveExpectTx(t, &full[s], StageBytes)
			gpu.TMALoad2D(t, &sm[s*boxA], &amap[0], int(kt)*BK, m0, &full[s])
			wb := int(stages)*boxA + int(s)*boxB
			gpu.TMALoad2D(t, &sm[wb], &wmap[0], int(kt)*BK, n0, &full[s])
			gpu.TMALoad2D(t, &sm[wb+BoxRows*BK], &wmap[0], int(kt)*BK, n0+BoxRows, &full[s])
			used++
			s++
			if s == stages {
				s, phase = 0, phase^1
			}
		}
	}
}
