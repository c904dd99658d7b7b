package ops

import "github.com/gokern/kern/ops/internal/decodek"

// DecodePartition picks PagedAttention's split-K size (Paged.Partition)
// for seqs sequences of up to maxSeqLen tokens on a GPU of sms
// multiprocessors (kern.Device.Multiprocessors; 0, as on the emulator,
// counts as 132, an H100's). Without splits the grid is seqs ×
// kvHeads·⌈(heads/kvHeads)/8⌉ blocks; when that is under two blocks per
// SM, the sequence is cut into enough splits to reach it, each a multiple
// of 64 tokens. A large batch (or one whose sequences are too short to
// cut) gets 0, split-K off, which saves the reduce kernel. A decode step
// at batch 1, 8 KV heads and a 576-token context is 8 blocks unsplit and
// 72 (9 splits of 64 tokens) with this choice, where vLLM's fixed 512 gives 16.
func DecodePartition(sms, seqs, heads, kvHeads, maxSeqLen int) int {
	if sms <= 0 {
		sms = 132
	}
	if seqs <= 0 || kvHeads <= 0 || heads < kvHeads || maxSeqLen <= decodek.PagedChunk {
		return 0
	}
	blocks := seqs * kvHeads * ((heads/kvHeads + decodek.PagedGroup - 1) / decodek.PagedGroup)
	target := 2 * sms
	if blocks >= target {
		return 0
	}
	splits := (target + blocks - 1) / blocks
	c := decodek.PagedChunk
	part := ((maxSeqLen+splits-1)/splits + c - 1) / c * c
	if part >= maxSeqLen {
		return 0
	}
	return part
}
