package qwen3

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/fixture"
)

// roundBF16 rounds each value to bfloat16 as the ops path does.
func roundBF16(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(gpu.ToBFloat16(float32(v)).Float32())
	}
	return out
}

// Tolerances of the ops path (bf16 activations and KV cache).
const (
	// opsStageRel: every stage against the float64 reference rounded to
	// bf16 at the same points. What is left is float32 against float64
	// (negligible), an input landing on the other side of a bf16 rounding
	// boundary (one bf16 ulp, 2^-8, on that element) and the attention
	// probabilities FlashAttention rounds to bf16 before P·V; these
	// compound through the random models' large gains (std 0.1 weights) to
	// about 2e-2 by the last layer (measured: layer 0's attention output
	// 5e-3, the logits 2e-2). An indexing or scaling error is O(1).
	opsStageRel = 3e-2
	// opsLogitsRel: the logits against transformers' fp32 compute. The
	// rounding model alone lands at up to 3e-2 here (ops.go's header).
	opsLogitsRel = 5e-2
)

// TestOpsForwardMatchesReference runs the ops path (UseOps) over the
// three tiny models on the emulator and in native mode: prefill and the
// greedy decode steps, every stage of every layer against the rounded
// float64 reference, the logits against transformers' fp32 logits, and
// the greedy tokens.
func TestOpsForwardMatchesReference(t *testing.T) {
	for _, v := range testVariants(t) {
		hf := loadHFReference(t, v.dir)
		for _, d := range testDevices {
			// Traced, each stage is checked too, on the unfused path;
			// untraced the fused kernels run (opsfused.go) and the logits
			// and greedy tokens are checked.
			for _, traced := range []bool{true, false} {
				name := v.name + "/" + d.name
				if !traced {
					name += "/fused"
				}
				t.Run(name, func(t *testing.T) {
					m, err := Load(d.dev, v.dir, LoadOptions{})
					if err != nil {
						t.Fatal(err)
					}
					defer m.Free()
					if err := m.UseOps(); err != nil {
						t.Fatal(err)
					}
					ref := loadRef(t, v.dir)
					ref.round16 = roundBF16
					V := m.Config.VocabSize
					cache, err := m.NewCache(32)
					if err != nil {
						t.Fatal(err)
					}
					defer cache.Free()
					var failed []string
					worst := 0.0
					m.Trace = func(stage string, layer int, x *kern.Buffer[float32], rows, cols int) error {
						got, err := x.Download()
						if err != nil {
							return err
						}
						want := ref.stages[fmt.Sprintf("%d/%s", layer, stage)]
						msg, share := compareRows(got, want, cols, opsStageRel)
						worst = max(worst, share)
						if msg != "" {
							failed = append(failed, fmt.Sprintf("layer %d %s: %s", layer, stage, msg))
						}
						return nil
					}
					if !traced {
						m.Trace = nil
					}
					step := func(name string, ids []int32, hfLogits []float32) int32 {
						t.Helper()
						ref.forward(ids)
						failed = nil
						out, err := m.Forward(cache, ids, true)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						for _, f := range failed {
							t.Errorf("%s: %s", name, f)
						}
						got, err := out.Download()
						if err != nil {
							t.Fatal(err)
						}
						msg, share := compareRows(got, f64(hfLogits), V, opsLogitsRel)
						if msg != "" {
							t.Errorf("%s: logits vs transformers: %s", name, msg)
						} else if testing.Verbose() {
							t.Logf("%s: logits within %.0f%% of %.0e of transformers' fp32, stages within %.0f%% of %.0e of the rounded reference", name, 100*share, opsLogitsRel, 100*worst, opsStageRel)
						}
						return argmax(got[len(got)-V:])
					}
					tok := step("prefill", hf.prompt, hf.prefill)
					S := len(hf.decode) / V
					for s := 0; s < S; s++ {
						if tok != hf.generated[s] {
							t.Fatalf("greedy token %d = %d, want %d", s, tok, hf.generated[s])
						}
						tok = step(fmt.Sprintf("decode %d", s), []int32{tok}, hf.decode[s*V:(s+1)*V])
					}
					if tok != hf.generated[S] {
						t.Errorf("greedy token %d = %d, want %d", S, tok, hf.generated[S])
					}
				})
			}
		}
	}
}

// TestOpsUnpaddedHeads covers what the tiny models (head_dim 16 and 32,
// padded to 64) do not: a head_dim the attention ops take as it is (64,
// like the real models' 128), where RoPE of k is fused into
// ops.KVCacheWrite and nothing is padded, and decode attention is
// split-K (two splits of 64 positions). Random weights of that shape
// run on both paths; the ops path's logits must match the float32
// path's (itself held to the reference by TestForwardMatchesReference)
// within the ops path's stage tolerance, at every step, with the same
// greedy tokens; its decode steps run from a graph.
func TestOpsUnpaddedHeads(t *testing.T) {
	cfg := Presets["tiny"]
	cfg.HeadDim = 64
	dev := testDevices[0].dev
	open := func(useOps bool) *Model {
		m, err := NewRandom(dev, cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Free)
		if useOps {
			if err := m.UseOps(); err != nil {
				t.Fatal(err)
			}
			if err := m.EnableGraphs(); err != nil {
				t.Fatal(err)
			}
			m.ops.partition = 64 // decode attention in two splits from position 64 on
		}
		return m
	}
	ref, got := open(false), open(true)
	rc, err := ref.NewCache(128)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Free()
	gc, err := got.NewCache(128)
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Free()
	V := cfg.VocabSize
	ids := make([]int32, 70)
	for i := range ids {
		ids[i] = int32((i*37 + 5) % V)
	}
	for s := 0; s < 4; s++ {
		want, err := ref.Forward(rc, ids, false)
		if err != nil {
			t.Fatal(err)
		}
		w, err := want.Download()
		if err != nil {
			t.Fatal(err)
		}
		have, err := got.Forward(gc, ids, false)
		if err != nil {
			t.Fatal(err)
		}
		g, err := have.Download()
		if err != nil {
			t.Fatal(err)
		}
		if msg, _ := compareRows(g, f64(w), V, opsStageRel); msg != "" {
			t.Errorf("step %d: ops logits vs float32 path: %s", s, msg)
		}
		if argmax(g) != argmax(w) {
			t.Fatalf("step %d: greedy token %d on the ops path, %d on the float32 path", s, argmax(g), argmax(w))
		}
		ids = []int32{argmax(w)}
	}
	if got.GraphReplays() != 2 {
		t.Errorf("%d decode steps replayed from a graph, want 2 (3 decode steps, the first eager)", got.GraphReplays())
	}
}

// TestOpsChunkedAndMixed covers the ops path's prefill over keys already
// in the cache: a prompt prefilled in two chunks (the second chunk's
// FlashAttention reads the first chunk's keys gathered from the pages),
// and a step where one sequence decodes while another prefills (the
// decode row goes through FlashAttention, not PagedAttention). Each must
// give the logits of the plain run (a one-shot prefill, a solo decode
// step) up to the ops path's rounding, with the same greedy token.
func TestOpsChunkedAndMixed(t *testing.T) {
	dir := fixture.Model(t, "tiny-qwen3-hd32")
	m, err := Load(testDevices[0].dev, dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if err := m.UseOps(); err != nil {
		t.Fatal(err)
	}
	pool, err := m.NewKVPool(8, DefaultPageSize)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Free()
	V := m.Config.VocabSize
	run := func(seqs []*Seq, toks ...[]int32) []float32 {
		t.Helper()
		out, err := m.ForwardBatch(seqs, toks)
		if err != nil {
			t.Fatal(err)
		}
		xs, err := out.Download()
		if err != nil {
			t.Fatal(err)
		}
		return xs
	}
	check := func(what string, got, want []float32) {
		t.Helper()
		if msg, _ := compareRows(got, f64(want), V, opsStageRel); msg != "" {
			t.Errorf("%s: %s", what, msg)
		}
		if argmax(got) != argmax(want) {
			t.Errorf("%s: greedy token %d, want %d", what, argmax(got), argmax(want))
		}
	}
	prompt := []int32{3, 141, 59, 26, 535, 897, 932, 384, 17, 23}
	other := []int32{5, 9, 200, 31, 77, 8}

	// The plain runs: one-shot prefill and a solo decode step of each.
	a, b := pool.NewSeq(), pool.NewSeq()
	whole := run([]*Seq{a}, prompt)
	tok := argmax(whole)
	aDecode := run([]*Seq{a}, []int32{tok})
	bPrefill := run([]*Seq{b}, other)
	a.Release()
	b.Release()

	// Chunked prefill, then a step mixing a's decode with b's prefill.
	a, b = pool.NewSeq(), pool.NewSeq()
	run([]*Seq{a}, prompt[:6])
	check("second prefill chunk", run([]*Seq{a}, prompt[6:]), whole)
	mixed := run([]*Seq{a, b}, []int32{tok}, other)
	check("decode row beside a prefill", mixed[:V], aDecode)
	check("prefill beside a decode row", mixed[V:], bPrefill)
}

// TestUseOpsRefuses: what the ops path cannot run is an error naming why,
// not a failure at the first step.
func TestUseOpsRefuses(t *testing.T) {
	dev := testDevices[0].dev
	big := Presets["tiny"]
	big.HeadDim = 256
	m, err := NewRandom(dev, big, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if err := m.UseOps(); err == nil || !strings.Contains(err.Error(), "head_dim 256") {
		t.Errorf("UseOps at head_dim 256: %v", err)
	}
	if err := m.EnableGraphs(); err == nil {
		t.Error("EnableGraphs without the ops path: no error")
	}
	m2, err := NewRandom(dev, Presets["tiny"], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Free()
	f32pool, err := m2.NewKVPool(2, DefaultPageSize)
	if err != nil {
		t.Fatal(err)
	}
	defer f32pool.Free()
	if err := m2.UseOps(); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.NewKVPool(4, 8); err == nil || !strings.Contains(err.Error(), "16 or 32") {
		t.Errorf("a pool of 8-position pages on the ops path: %v", err)
	}
	if _, err := m2.ForwardBatch([]*Seq{f32pool.NewSeq()}, [][]int32{{1, 2}}); err == nil || !strings.Contains(err.Error(), "before UseOps") {
		t.Errorf("a float32 pool on the ops path: %v", err)
	}
}
