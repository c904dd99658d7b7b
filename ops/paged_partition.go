package ops

import "github.com/gokern/kern/ops/internal/decodek"

// DecodePartition picks PagedAttention's split-K size (Paged.Partition)
// for seqs sequences of up to maxSeqLen tokens on a GPU of sms
// multiprocessors (kern.Device.Multiprocessors; 0, as on the emulator,
// counts as 132, an H100's).
//
// Without splits the grid is seqs × kvHeads·⌈(heads/kvHeads)/8⌉ blocks.
// When that is at least 8 per SM (about four waves of v3, which fits 2
// blocks per SM; enough that the last wave's idle SMs cost little) it
// returns 0, split-K off, which saves the reduce kernel. Otherwise it
// cuts the sequences into enough splits to reach 8 per SM: a multiple
// of 64 tokens, at most 512 (vLLM's size, which measured best for v1 at
// long contexts: more, shorter blocks balance better) and at least 64.
// A decode step at batch 1, 8 KV heads and a 576-token context is then
// 9 splits of 64 tokens, 72 blocks, where 512 gives 16. v3 at head dim
// 128 spreads each sequence over the splits (decodemma.SplitLen), so the
// same holds when maxSeqLen is a pool's 40960: 9 splits of 64 tokens of
// the 128 the grid has, not 2 of its 320.
func DecodePartition(sms, seqs, heads, kvHeads, maxSeqLen int) int {
	c := decodek.PagedChunk
	if seqs <= 0 || kvHeads <= 0 || heads < kvHeads || maxSeqLen <= c {
		return 0
	}
	blocks := seqs * kvHeads * ((heads/kvHeads + decodek.PagedGroup - 1) / decodek.PagedGroup)
	target := decodeBlocks(sms)
	if blocks >= target {
		return 0
	}
	splits := (target + blocks - 1) / blocks
	part := ((maxSeqLen+splits-1)/splits + c - 1) / c * c
	part = min(max(part, c), 512)
	if part >= maxSeqLen {
		return 0
	}
	return part
}

// pagedStride is the blocks a strided PagedAttention kernel
// (decodemma.Strided) gives each (sequence, head group) of a split-K
// launch: enough for grid blocks to reach decodeBlocks, at most splits
// and at least 1. Each block takes splits x, x+stride, … of its sequence,
// so a batch of many sequences runs a grid of about 8 blocks per SM
// whatever the split count, where one block per split launched mostly
// empty blocks (at 32 sequences, 8 KV heads and 99 splits: 25344 blocks
// for 768 with work). Which block takes a split does not change its
// arithmetic: the result is the same at every stride.
func pagedStride(sms, splits, grid int) int {
	return max(1, min(splits, (decodeBlocks(sms)+grid-1)/max(grid, 1)))
}

// decodeBlocks is the grid decode attention aims for on a GPU of sms
// multiprocessors (0, as on the emulator, counts as 132, an H100's): 8
// blocks per SM, about four waves of v3's 2 per SM, enough that the last
// wave's idle SMs cost little.
func decodeBlocks(sms int) int {
	if sms <= 0 {
		sms = 132
	}
	return 8 * sms
}
