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
	// With at least 4 blocks per SM the hardware's dynamic block
	// scheduling evens the SMs out to within one block, a quarter of the
	// kernel or less, and a split would only add partial sums.
	spreadTiles = 4
)

// Splits returns how many blocks share each tile's K: the S in 1…MaxSplits
// that minimises the work of the busiest SM when the tiles·S blocks of an
// n×k weight are dealt over sms SMs, ⌈tiles·S/sms⌉ blocks of 1/S tile
// each, with ties to the smaller S (fewer partial sums). sms ≤ 0 plans
// for NominalSMs.
//
// Qwen3-4B on an H100 (132 SMs): o and down (N = 2560, 160 tiles) split
// in 4, 640 blocks of at most 5 per SM where unsplit 28 SMs would carry
// 2 tiles and 104 one, so the busiest SM has 1.25 tiles of bytes against
// 2 (the mean is 1.21); qkv (384 tiles, at most 3 per SM, 97% even) and
// gate/up (1216 tiles) stay whole.
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
