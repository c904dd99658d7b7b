package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// TestAttentionSanitizers runs the attention kernels once each on the
// emulator with memcheck (out-of-bounds and uninitialised reads),
// racecheck (shared-memory races between warps) and synccheck, at shapes
// with ragged tiles, partial pages, GQA and split-K, at head dims 64,
// 128 and 256.
func TestAttentionSanitizers(t *testing.T) {
	dev := kern.OpenEmulator(emu.Options{Memcheck: true, Racecheck: true, Synccheck: true})
	rng := rand.New(rand.NewPCG(9, 9))
	h := func(n int) *kern.Buffer[gpu.Half] { b, _ := upload[gpu.Half](t, dev, normals(rng, n, 1)); return b }
	for _, hd := range []int{64, 128, 256} {
		c := attnCase{lq: []int{70, 3}, lk: []int{70, 90}, heads: 4, kvHeads: 2, hd: hd, causal: true}
		nq, nk := sum(c.lq)*c.heads*hd, sum(c.lk)*c.kvHeads*hd
		q, k, v := h(nq), h(nk), h(nk)
		cuQ, cuK := uploadT(t, dev, SeqOffsets(c.lq...)), uploadT(t, dev, SeqOffsets(c.lk...))
		a := Attention{Heads: 4, KVHeads: 2, HeadDim: hd, Causal: true, MaxSeqQ: 70}
		out, lse := alloc[gpu.Half](t, dev, nq), alloc[float32](t, dev, 4*sum(c.lq))
		if err := FlashAttention(dev, out, q, k, v, lse, cuQ, cuK, a); err != nil {
			t.Errorf("FlashAttention d%d: %v", hd, err)
		}
		// The backward is v2 (tensor cores) at 64 and 128, v1 at 256.
		g := AttentionGrads[gpu.Half]{DQ: alloc[gpu.Half](t, dev, nq), DK: alloc[gpu.Half](t, dev, nk), DV: alloc[gpu.Half](t, dev, nk), Delta: alloc[float32](t, dev, 4*sum(c.lq))}
		if err := FlashAttentionBackward(dev, g, q, k, v, out, h(nq), lse, cuQ, cuK, a); err != nil {
			t.Errorf("FlashAttentionBackward d%d: %v", hd, err)
		}

		pc := pagedCase{lens: []int{100, 5}, heads: 4, kvHeads: 1, hd: hd, pageSize: 16, partition: 64}
		kcH, vcH, table, lens, _, _ := fillPaged(rng, pc, 8)
		kc, _ := upload[gpu.Half](t, dev, kcH)
		vc, _ := upload[gpu.Half](t, dev, vcH)
		for _, part := range []int{0, 64} {
			p := Paged{Heads: 4, KVHeads: 1, HeadDim: hd, PageSize: 16, MaxPages: 8, Partition: part}
			scratch, err := NewSplitScratch(dev, 2, 4, hd, p.Splits(100))
			if err != nil {
				t.Fatal(err)
			}
			if err := PagedAttention(dev, alloc[gpu.Half](t, dev, 2*4*hd), h(2*4*hd), kc, vc, uploadT(t, dev, table), uploadT(t, dev, lens), 100, p, scratch); err != nil {
				t.Errorf("PagedAttention d%d split %d: %v", hd, part, err)
			}
			scratch.Free()
		}
		err := KVCacheWrite(dev, kc, vc, h(3*hd), h(3*hd), uploadT(t, dev, []int32{17, -1, 40}), uploadT(t, dev, []int32{1, 2, 3}),
			KVWrite{Tokens: 3, KVHeads: 1, HeadDim: hd, Theta: 10000})
		if err != nil {
			t.Errorf("KVCacheWrite d%d: %v", hd, err)
		}
	}
}
