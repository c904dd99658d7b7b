//go:build !kerngen

package main

// kern bench attention: package ops' attention at one shape each.
//
//	prefill  ops.FlashAttention, causal and not: TFLOP/s counting the
//	         two matrix products, 4·batch·heads·seq²·headDim flops (half
//	         of it when causal). The driver does not report tensor-core
//	         throughput, so no % of peak is printed: compare with the
//	         GPU's dense f16 figure (A100 312, H100 SXM 989 TFLOP/s).
//	backward ops.FlashAttentionBackward (v2, tensor cores), causal:
//	         TFLOP/s counting FlashAttention-2's five matrix products,
//	         2.5× the causal forward's flops (v2 does seven: S and dP
//	         are recomputed for dQ).
//	prefill d256  ops.FlashAttention, causal, at head dim 256 (same
//	         tokens and heads).
//	prefill (old)  on Hopper, the prefill rows again with the first
//	         sm_90a kernel (ops.AttentionHopperVersion 1: 64-key tiles).
//	decode   ops.PagedAttention with split-K off and on, at each
//	         -decode-ctx context length (bench_paged.go): GB/s counting
//	         the KV cache it must read, 2·seqs·context·kvHeads·headDim·2
//	         bytes, and that as a % of the DRAM peak (issue 10's goal is
//	         80%).
//
// On a GPU the shapes are a model's (head dim 128; prefill 4 sequences of
// -attn-seq 4096 tokens × 16 heads; decode Qwen3-4B's 32 query and 8 KV
// heads, 16-token pages, at 1024 to 32768 tokens of context); on the
// emulator and in native mode they shrink to a few hundred tokens, and
// the figures only say that the op runs there.

import (
	"fmt"
	"math"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops"
)

func benchAttention(env *benchEnv) error {
	if env.cfg.opsDtype == "bf16" {
		return benchAttentionOf[gpu.BFloat16](env, "bf16")
	}
	return benchAttentionOf[gpu.Half](env, "f16")
}

// attnShape is the size the attention benchmarks run at.
type attnShape struct {
	batch, seq, heads, kvHeads, hd int // prefill
	dHeads, dKV, page, partition   int // decode
	ctxs                           []int
	tokens                         int // decode: sequences × context, at least one sequence
}

func newAttnShape(env *benchEnv) attnShape {
	sh := attnShape{batch: 1, seq: 128, heads: 2, kvHeads: 1, hd: 64, dHeads: 4, dKV: 2, page: 16, partition: 128,
		ctxs: []int{256, 512}, tokens: 512}
	if env.isCUDA() {
		// Decode: 256Ki tokens of KV cache in all (1 GiB in 16 bits at
		// Qwen3-4B's 8 KV heads of 128), 20× an H100's L2, so the cache
		// really comes from DRAM.
		sh = attnShape{batch: 4, seq: 4096, heads: 16, kvHeads: 16, hd: 128, dHeads: 32, dKV: 8, page: 16, partition: 512,
			ctxs: []int{1024, 4096, 16384, 32768}, tokens: 256 << 10}
	}
	if env.cfg.attnSeq > 0 {
		sh.seq = env.cfg.attnSeq
	}
	if env.cfg.decodeCtx != nil {
		sh.ctxs = env.cfg.decodeCtx
	}
	return sh
}

func benchAttentionOf[T ops.Half16](env *benchEnv, dtype string) error {
	sh := newAttnShape(env)
	dev := env.dev
	var frees []func() error
	defer func() {
		for _, f := range frees {
			f()
		}
	}()
	var err error
	alloc := func(n int) *kern.Buffer[T] {
		if err != nil {
			return nil
		}
		vals := make([]T, n)
		for i := range vals {
			vals[i] = fromFloat[T](float32(i%17-8) / 32)
		}
		b, e := kern.Upload(dev, vals)
		if err = e; err == nil {
			frees = append(frees, b.Free)
		}
		return b
	}
	upload32 := func(xs []int32) *kern.Buffer[int32] {
		if err != nil {
			return nil
		}
		b, e := kern.Upload(dev, xs)
		if err = e; err == nil {
			frees = append(frees, b.Free)
		}
		return b
	}

	// Prefill buffers.
	tokens := sh.batch * sh.seq
	q, o := alloc(tokens*sh.heads*sh.hd), alloc(tokens*sh.heads*sh.hd)
	k, v := alloc(tokens*sh.kvHeads*sh.hd), alloc(tokens*sh.kvHeads*sh.hd)
	lens := make([]int, sh.batch)
	for i := range lens {
		lens[i] = sh.seq
	}
	cu := upload32(ops.SeqOffsets(lens...))
	// Backward and head dim 256 buffers.
	dQ, dK, dV := alloc(tokens*sh.heads*sh.hd), alloc(tokens*sh.kvHeads*sh.hd), alloc(tokens*sh.kvHeads*sh.hd)
	q256, o256 := alloc(tokens*sh.heads*256), alloc(tokens*sh.heads*256)
	kv256 := alloc(tokens * sh.kvHeads * 256)
	var lse, delta *kern.Buffer[float32]
	if err == nil {
		lse, err = kern.Alloc[float32](dev, sh.heads*tokens)
	}
	if err == nil {
		frees = append(frees, lse.Free)
		delta, err = kern.Alloc[float32](dev, sh.heads*tokens)
	}
	if err == nil {
		frees = append(frees, delta.Free)
	}

	if err != nil {
		return err
	}

	causal := ops.Attention{Heads: sh.heads, KVHeads: sh.kvHeads, HeadDim: sh.hd, MaxSeqQ: sh.seq, MaxSeqK: sh.seq, Causal: true}
	if err := ops.FlashAttention(dev, o, q, k, v, lse, cu, cu, causal); err != nil { // the LSE the backward reads
		return err
	}
	grads := ops.AttentionGrads[T]{DQ: dQ, DK: dK, DV: dV, Delta: delta}

	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	flops := 4 * float64(sh.batch) * float64(sh.heads) * float64(sh.seq) * float64(sh.seq) * float64(sh.hd)
	cases := []struct {
		name, size string
		work       float64 // flops, or bytes when memBound
		memBound   bool
		run        func(q kern.Queue) error
	}{
		{"prefill " + dtype, fmt.Sprintf("%d×%d×%dh×%d", sh.batch, sh.seq, sh.heads, sh.hd), flops, false, func(qu kern.Queue) error {
			return ops.FlashAttention(qu, o, q, k, v, nil, cu, cu, ops.Attention{Heads: sh.heads, KVHeads: sh.kvHeads, HeadDim: sh.hd, MaxSeqQ: sh.seq})
		}},
		{"prefill causal " + dtype, fmt.Sprintf("%d×%d×%dh×%d", sh.batch, sh.seq, sh.heads, sh.hd), flops / 2, false, func(qu kern.Queue) error {
			return ops.FlashAttention(qu, o, q, k, v, nil, cu, cu, ops.Attention{Heads: sh.heads, KVHeads: sh.kvHeads, HeadDim: sh.hd, MaxSeqQ: sh.seq, Causal: true})
		}},
		{"backward causal " + dtype, fmt.Sprintf("%d×%d×%dh×%d", sh.batch, sh.seq, sh.heads, sh.hd), 2.5 * flops / 2, false, func(qu kern.Queue) error {
			return ops.FlashAttentionBackward(qu, grads, q, k, v, o, q, lse, cu, cu, causal)
		}},
		{"prefill d256 causal " + dtype, fmt.Sprintf("%d×%d×%dh×%d", sh.batch, sh.seq, sh.heads, 256), flops / float64(sh.hd) * 256 / 2, false, func(qu kern.Queue) error {
			return ops.FlashAttention(qu, o256, q256, kv256, kv256, nil, cu, cu, ops.Attention{Heads: sh.heads, KVHeads: sh.kvHeads, HeadDim: 256, MaxSeqQ: sh.seq, Causal: true})
		}},
	}
	if ops.HopperAttention(dev) {
		// The first Hopper kernel at head dim 128, timed beside the
		// current one.
		version := func(v int, f func(kern.Queue) error) func(kern.Queue) error {
			return func(qu kern.Queue) error {
				ops.AttentionHopperVersion = v
				defer func() { ops.AttentionHopperVersion = 0 }()
				return f(qu)
			}
		}
		for _, v := range []struct {
			v   int
			tag string
		}{{1, " (old)"}} {
			for _, c := range cases[:2] {
				c.name, c.run = c.name+v.tag, version(v.v, c.run)
				cases = append(cases, c)
			}
		}
	}
	for _, c := range cases {
		sec, err := timeRuns(env.cfg, func() (time.Duration, error) {
			return timeOnStream(s, func() error { return c.run(s) })
		})
		if err != nil {
			env.failed = append(env.failed, fmt.Errorf("kern bench attention: %s: %w", c.name, err))
			continue
		}
		row := benchRow{bench: "attention", name: c.name, size: c.size, time: sec, peak: math.NaN()}
		if c.memBound {
			row.value, row.unit = c.work/sec/1e9, "GB/s"
			if env.isCUDA() {
				row.peak = env.pctOfPeak(c.work / sec)
			}
		} else {
			row.value, row.unit = c.work/sec/1e12, "TFLOP/s"
		}
		env.add(row)
	}
	for _, ctx := range sh.ctxs {
		benchPagedDecode[T](env, s, sh, dtype, ctx)
	}
	env.notef("attention: prefill runs the %s kernels", ops.FlashAttentionKernels(dev))
	if !env.isCUDA() {
		env.notef("attention: on %s the shapes are small and the figures are not a GPU's", dev.Kind())
	}
	return nil
}
