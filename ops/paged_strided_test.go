package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/decodemma"
)

// TestSplitLen checks v3's spread of a sequence over its splits: every
// split length a multiple of 64 between 64 and the partition, the splits
// it needs within the grid's, and a sequence of up to 64 tokens per split
// cut into 64-token splits (as many blocks as it can fill).
func TestSplitLen(t *testing.T) {
	for _, nsplit := range []int{2, 3, 10, 128} {
		for _, part := range []int{64, 128, 320, 512} {
			for n := 0; n <= nsplit*part; n += 1 + n/7 {
				p := decodemma.SplitLen(n, nsplit, part)
				if p%64 != 0 || p < 64 || p > part {
					t.Fatalf("SplitLen(%d, %d, %d) = %d: not a multiple of 64 in [64, %d]", n, nsplit, part, p, part)
				}
				if used := (n + p - 1) / p; used > nsplit {
					t.Fatalf("SplitLen(%d, %d, %d) = %d: %d splits, over %d", n, nsplit, part, p, used, nsplit)
				}
				if n <= 64*nsplit && p != 64 {
					t.Fatalf("SplitLen(%d, %d, %d) = %d, want 64", n, nsplit, part, p)
				}
			}
		}
	}
	if p := decodemma.SplitLen(500, 1, 1024); p != 1024 {
		t.Errorf("SplitLen with one split = %d, want the partition, 1024", p)
	}
}

// TestPagedStride checks pagedStride: about 8 blocks per SM, never more
// per sequence than splits, never 0.
func TestPagedStride(t *testing.T) {
	for _, c := range []struct{ sms, splits, grid, want int }{
		{132, 10, 8, 10},   // batch 1, 8 KV heads: every split its block
		{132, 132, 8, 132}, // a pool sized for 40960 tokens
		{132, 99, 256, 5},  // 32 sequences × 8 KV heads: 1280 blocks, not 25344
		{132, 74, 64, 17},  // 8 sequences
		{0, 74, 64, 17},    // no SM count: an H100's
		{132, 4, 5000, 1},  // more than enough blocks without splitting
		{16, 1, 8, 1},      // split-K off
	} {
		if got := pagedStride(c.sms, c.splits, c.grid); got != c.want {
			t.Errorf("pagedStride(%d SMs, %d splits, %d blocks) = %d, want %d", c.sms, c.splits, c.grid, got, c.want)
		}
	}
}

// TestPagedStridedBatchInvariant runs v3 at head dim 128 on a batch large
// enough that each (sequence, head group) gets fewer blocks than its
// sequence has splits, so blocks take several splits in turn, and checks
// that every sequence's output has the bits of the same sequence run
// alone (a block per split): which block takes a split does not change
// its arithmetic. runPaged's cases check the values themselves.
func TestPagedStridedBatchInvariant(t *testing.T) {
	dev := kern.OpenEmulator()
	rng := rand.New(rand.NewPCG(11, 3))
	lens := make([]int, 36)
	for i := range lens {
		lens[i] = rng.IntN(700)
	}
	lens[0], lens[1], lens[2], lens[3] = 700, 0, 65, 1
	c := pagedCase{lens: lens, heads: 16, kvHeads: 8, hd: 128, pageSize: 16, partition: 128}
	maxPages := 45
	kcH, vcH, table, seqLens, _, _ := fillPaged(rng, c, maxPages)
	kc, _ := upload[gpu.BFloat16](t, dev, kcH)
	vc, _ := upload[gpu.BFloat16](t, dev, vcH)
	row := c.heads * c.hd
	qH := randn(rng, len(lens)*row, 1)
	p := Paged{Heads: c.heads, KVHeads: c.kvHeads, HeadDim: c.hd, PageSize: c.pageSize, MaxPages: maxPages, Partition: c.partition, Version: 3}
	splits := p.Splits(700)
	if stride := pagedStride(dev.Multiprocessors(), splits, c.kvHeads*len(lens)); stride >= splits {
		t.Fatalf("stride %d for %d splits: the batch is too small to make blocks loop", stride, splits)
	}
	run := func(seqs []int) [][]float64 {
		var tab, sl []int32
		var qs []float64
		for _, s := range seqs {
			tab = append(tab, table[s*maxPages:][:maxPages]...)
			sl = append(sl, seqLens[s])
			qs = append(qs, qH[s*row:][:row]...)
		}
		q, _ := upload[gpu.BFloat16](t, dev, qs)
		out := alloc[gpu.BFloat16](t, dev, len(seqs)*row)
		scratch, err := NewSplitScratch(dev, len(seqs), c.heads, c.hd, splits)
		if err != nil {
			t.Fatal(err)
		}
		defer scratch.Free()
		if err := PagedAttention(dev, out, q, kc, vc, uploadT(t, dev, tab), uploadT(t, dev, sl), 700, p, scratch); err != nil {
			t.Fatal(err)
		}
		o := download(t, out)
		var per [][]float64
		for i := range seqs {
			per = append(per, o[i*row:][:row])
		}
		return per
	}
	all := make([]int, len(lens))
	for i := range all {
		all[i] = i
	}
	batch := run(all)
	for _, s := range []int{0, 1, 2, 3, 17, 35} {
		alone := run([]int{s})[0]
		for i, v := range alone {
			if batch[s][i] != v {
				t.Fatalf("sequence %d (%d tokens): out[%d] = %v in the batch, %v alone", s, lens[s], i, batch[s][i], v)
			}
		}
	}
}
