package gemv3

// Launch shape, limits and the split-K plan, for ops.Matmul.
const (
	Rows       = 16              // rows of W per tile (columns of out)
	Threads    = warps * 32      // threads per block
	Shared     = warps * 256 * 4 // the block's reduction buffer, bytes
	MaxM       = 16              // rows of x the kernels take
	MaxSplits  = 8               // splits of K per tile, at most
	NominalSMs = 132             // the SM count planned for where the device reports none (an H100 SXM)
)

const (
	warps  = 8              // warps per block, all on the same tile
	unroll = 4              // consecutive chunks of 32 columns per warp and iteration
	group  = warps * unroll // chunks per block iteration

	// minChunks is the fewest chunks of 32 columns a split may have: one
	// block iteration, so that every warp has its unroll chunks to load
	// (a warp takes unroll consecutive chunks of each group of 32).
	minChunks = group

	// spreadTiles: from this many tiles per SM on, a grid is left unsplit.
	// Measured on an H100 (docs/performance-gpu.md, 2026-11-28), one tile
	// per SM is already enough: Qwen3-4B's o and down (160 tiles on 132
	// SMs) ran 5–19% slower split in 4 than whole, at M = 1 and 16. The
	// GEMV is bound by DRAM, not by any one SM, so the 28 SMs with a
	// second tile are not the bottleneck the block count suggests, and a
	// split only adds partial sums; it pays where tiles leave SMs idle.
	spreadTiles = 1
)

// Splits returns how many blocks share each tile's K: the S in 1…MaxSplits
// that minimises the work of the busiest SM when the tiles·S blocks of an
// n×k weight are dealt over sms SMs, ⌈tiles·S/sms⌉ blocks of 1/S tile
// each, with ties to the smaller S (fewer partial sums). sms ≤ 0 plans
// for NominalSMs.
//
// Only grids of fewer tiles than SMs are split (spreadTiles): Qwen3-4B's
// projections on an H100 (132 SMs; o and down 160 tiles, qkv 384, gate/up
// 1216) all stay whole; a 1024-wide projection (64 tiles) splits in 2.
func Splits(sms, n, k int) int {
	if sms <= 0 {
		sms = NominalSMs
	}
	tiles := (n + Rows - 1) / Rows
	chunks := (k + 31) / 32
	if tiles >= spreadTiles*sms {
		return 1
	}
	best, bestLoad := 1, 0.0
	for s := 1; s <= MaxSplits && (s == 1 || chunks/s >= minChunks); s++ {
		perSM := (tiles*s + sms - 1) / sms // blocks on the busiest SM
		load := float64(perSM) / float64(s)
		if s == 1 || load < bestLoad-1e-9 {
			best, bestLoad = s, load
		}
	}
	return best
}

// Workspace returns the float32 elements and uint32 counters a launch
// with the given splits needs: splits·m·n partial sums and one arrival
// counter per tile. Both are 0 for an unsplit launch.
func Workspace(splits, m, n int) (partials, counters int) {
	if splits <= 1 {
		return 0, 0
	}
	return splits * m * n, (n + Rows - 1) / Rows
}
