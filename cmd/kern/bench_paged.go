//go:build !kerngen

package main

// kern bench attention, decode rows: ops.PagedAttention reading a paged
// KV cache, the memory-bound half of decoding (issue 10's goal: the cache
// read at ≥ 80% of the DRAM peak).
//
// One row per context length (-decode-ctx) and split-K setting. Every
// context length runs the same number of cached tokens in all (sh.tokens:
// 256Ki on a GPU), as tokens/context sequences of context tokens each, so
// the cache is always many times the L2 and the figure is DRAM's
// (-decode-seqs fixes the number of sequences instead). Each
// sequence's pages are laid out in the pool in order. The figure is GB/s
// of cache read, 2 (K and V) · seqs · context · kvHeads · headDim · 2
// bytes, over the median time, and on a GPU that as a % of the DRAM peak.
// Split-K cuts each sequence into sh.partition-token pieces (512 on a
// GPU) and adds ops' reduce kernel; without it a block walks a whole
// sequence, which leaves most SMs idle when there are few sequences.
//
// Rows: "decode" and "decode split-K" run the kernel the op picks
// (ops.PagedVersion: v3, tensor cores and the next step's loads in
// flight, at head dims 64 and 128); "decode v2", "decode split-K v2",
// "decode v1" and "decode split-K v1" the other versions beside it
// (ops/paged.go describes them), on the same buffers; "decode split-K
// auto" the partition ops.DecodePartition picks for the device (a row
// only when that is split-K and not sh.partition).
// Each row's note names the version and the splits.

import (
	"fmt"
	"math"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/ops"
)

// benchPagedDecode adds the rows of one context length. A failure is
// recorded in env.failed and the other rows go on.
func benchPagedDecode[T ops.Half16](env *benchEnv, s *kern.Stream, sh attnShape, dtype string, ctx int) {
	if err := pagedDecodeCase[T](env, s, sh, dtype, ctx); err != nil {
		env.failed = append(env.failed, fmt.Errorf("kern bench attention: decode %s context %d: %w", dtype, ctx, err))
	}
}

func pagedDecodeCase[T ops.Half16](env *benchEnv, s *kern.Stream, sh attnShape, dtype string, ctx int) error {
	dev := env.dev
	seqs := max(1, sh.tokens/ctx)
	if env.cfg.decodeSeqs > 0 {
		seqs = env.cfg.decodeSeqs
	}
	pagesPer := (ctx + sh.page - 1) / sh.page
	al := &allocs{dev: dev}
	defer al.free()
	kvLen := seqs * pagesPer * sh.page * sh.dKV * sh.hd
	kc, vc := halfBuf[T](al, kvLen), halfBuf[T](al, kvLen)
	q, o := halfBuf[T](al, seqs*sh.dHeads*sh.hd), halfBuf[T](al, seqs*sh.dHeads*sh.hd)
	table := make([]int32, seqs*pagesPer)
	for i := range table {
		table[i] = int32(i)
	}
	lens := make([]int32, seqs)
	for i := range lens {
		lens[i] = int32(ctx)
	}
	bt, sl := upload(al, table), upload(al, lens)
	if al.err != nil {
		return al.err
	}
	paged := ops.Paged{Heads: sh.dHeads, KVHeads: sh.dKV, HeadDim: sh.hd, PageSize: sh.page, MaxPages: pagesPer}
	split := paged
	split.Partition = sh.partition
	auto := paged
	auto.Partition = ops.DecodePartition(dev.Multiprocessors(), seqs, sh.dHeads, sh.dKV, ctx)
	scratch, err := ops.NewSplitScratch(dev, seqs, sh.dHeads, sh.hd, max(split.Splits(ctx), auto.Splits(ctx)))
	if err != nil {
		return err
	}
	defer scratch.Free()
	v1, splitV1, v2, splitV2 := paged, split, paged, split
	v1.Version, splitV1.Version, v2.Version, splitV2.Version = 1, 1, 2, 2
	kvBytes := 2 * float64(seqs) * float64(ctx) * float64(sh.dKV) * float64(sh.hd) * 2
	size := fmt.Sprintf("%d×%d×%d/%dh", seqs, ctx, sh.dHeads, sh.dKV)
	for _, c := range []struct {
		name string
		p    ops.Paged
		sc   *ops.SplitScratch
		auto bool
	}{
		{"decode " + dtype, paged, nil, false},
		{"decode split-K " + dtype, split, scratch, false},
		{"decode v2 " + dtype, v2, nil, false},
		{"decode split-K v2 " + dtype, splitV2, scratch, false},
		{"decode v1 " + dtype, v1, nil, false},
		{"decode split-K v1 " + dtype, splitV1, scratch, false},
		{"decode split-K auto " + dtype, auto, scratch, true},
	} {
		if c.auto && (auto.Partition == 0 || auto.Partition == split.Partition) || c.p.Version == 2 && sh.hd == 256 {
			continue // the same as another row, or v2 where it has no kernel
		}
		sec, err := timeRuns(env.cfg, func() (time.Duration, error) {
			return timeOnStream(s, func() error { return ops.PagedAttention(s, o, q, kc, vc, bt, sl, ctx, c.p, c.sc) })
		})
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		row := benchRow{bench: "attention", name: c.name, size: size, time: sec, value: kvBytes / sec / 1e9, unit: "GB/s", peak: math.NaN()}
		if env.isCUDA() {
			row.peak = env.pctOfPeak(kvBytes / sec)
		}
		row.note = fmt.Sprintf("v%d", ops.PagedVersion(c.p))
		if c.sc != nil {
			row.note += fmt.Sprintf(", %d splits of %d tokens", c.p.Splits(ctx), c.p.Partition)
		}
		env.add(row)
	}
	return nil
}

// halfBuf uploads n 16-bit floats in [-0.25, 0.25].
func halfBuf[T ops.Half16](al *allocs, n int) *kern.Buffer[T] {
	xs := make([]T, n)
	for i := range xs {
		xs[i] = fromFloat[T](float32(i%17-8) / 32)
	}
	return upload(al, xs)
}
