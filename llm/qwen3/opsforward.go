package qwen3

// The forward pass on package ops (see ops.go for why and when):
//
//	x (float32) → RMSNorm → cast → q, k, v in one ops.Matmul (stacked
//	weights; the GEMV in a decode step, the tiles in a prefill; in an
//	untraced decode step the norm and cast are the GEMV's own, its
//	MatmulOpts.RMSNorm), split apart → QK-norm, RoPE of q
//	(float32) → pad/cast to the cache's type
//	→ ops.KVCacheWrite (RoPE of k fused when the head needs no padding)
//	→ attention: ops.PagedAttention when every sequence decodes one
//	  token (a decode step), else ops.FlashAttention (varlen, causal; a
//	  prefill step, every sequence more than one token) over the keys
//	  gathered from the pages → o_proj with the residual fused
//	→ RMSNorm → cast (fused likewise) → gate/up with the SwiGLU epilogue (16-bit out)
//	→ down_proj with the residual fused → … → final norm, lm_head (in an
//	untraced decode step, the norm fused into the lm_head GEMV too).

import (
	"errors"
	"fmt"
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/llm/safetensors"
	"github.com/gokern/kern/ops"
)

// opsBufs is a workspace's 16-bit activations.
type opsBufs[T ops.Half16] struct {
	h      *kern.Buffer[T] // [R, H] a projection's input
	q      *kern.Buffer[T] // [R, heads, hd]
	k, v   *kern.Buffer[T] // [R, kvHeads, hd]
	a, au  *kern.Buffer[T] // attention out [R, heads, hd], unpadded [R, qdim] (= a when hd = headDim)
	act    *kern.Buffer[T] // [R, I] silu(gate)·up
	hn     *kern.Buffer[T] // [S, H]
	a32    *kern.Buffer[float32]
	qkv    *kern.Buffer[float32] // [R, qdim+2·kvdim] the stacked projection's output
	split  *ops.SplitScratch     // PagedAttention's split-K partials, made on the first decode step
	mega   *megaState            // the persistent layer's plan and scratch (mega.go), made likewise
	splits int                   // the splits split holds (0: none yet)
}

func (b *opsBufs[T]) free() {
	for _, x := range []*kern.Buffer[T]{b.h, b.q, b.k, b.v, b.a, b.hn, b.act} {
		if x != nil {
			x.Free()
		}
	}
	if b.au != nil && b.au != b.a {
		b.au.Free()
	}
	if b.a32 != nil {
		b.a32.Free()
	}
	if b.qkv != nil {
		b.qkv.Free()
	}
	if b.split != nil {
		b.split.Free()
	}
	b.mega.free()
}

func newOpsBufs[T ops.Half16](m *Model, R, S int) (*opsBufs[T], error) {
	c, hd := m.Config, m.ops.hd
	var errs []error
	a := func(n int) *kern.Buffer[T] {
		b, err := kern.Alloc[T](m.dev, n)
		errs = append(errs, err)
		return b
	}
	b := &opsBufs[T]{}
	b.h, b.hn, b.act = a(R*c.HiddenSize), a(S*c.HiddenSize), a(R*c.IntermediateSize)
	b.q, b.a = a(R*c.NumAttentionHeads*hd), a(R*c.NumAttentionHeads*hd)
	b.k, b.v = a(R*c.NumKeyValueHeads*hd), a(R*c.NumKeyValueHeads*hd)
	b.au = b.a
	if hd != c.HeadDim {
		b.au = a(R * c.QDim())
	}
	var err error
	b.a32, err = kern.Alloc[float32](m.dev, R*c.QDim())
	errs = append(errs, err)
	b.qkv, err = kern.Alloc[float32](m.dev, R*(c.QDim()+2*c.KVDim()))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		b.free()
		return nil, err
	}
	return b, nil
}

// opsStep is what forward hands the ops pass beyond the workspace.
type opsStep struct {
	upload  bool    // the step's tables are copied by its launches (a graph's)
	pick    bool    // the step picks its candidates (candidates.go)
	ctx     int     // the longest sequence after the step
	maxQ    int     // the most tokens of one sequence in the step
	seqLens []int32 // per sequence, positions after the step
	cuQ     []int32 // query offsets
	cuK     []int32 // key offsets (prefix sums of seqLens)
	kvSlots []int32 // the cache slot of every key of every sequence, in order
}

func (m *Model) opsForward(pool *KVPool, w *workspace, st *opsStep, all bool) error {
	if pool.hd != m.ops.hd {
		return errors.New("qwen3: the KV pool was made before UseOps: it holds float32, the ops path 16-bit")
	}
	if m.ops.dt == safetensors.BF16 {
		return opsLayers[gpu.BFloat16](m, pool, w, st, all)
	}
	return opsLayers[gpu.Half](m, pool, w, st, all)
}

// growKV returns the model's gathered-keys and -values buffers with room
// for n elements each, reallocated (both, to the same length, as
// FlashAttention wants) when short.
func growKV[T ops.Half16](m *Model, n int) (kg, vg *kern.Buffer[T], err error) {
	o := m.ops
	kg, _ = o.kg.(*kern.Buffer[T])
	vg, _ = o.vg.(*kern.Buffer[T])
	if kg != nil && vg != nil && kg.Len() >= n && kg.Len() == vg.Len() {
		return kg, vg, nil
	}
	if kg != nil {
		n = max(n, 2*kg.Len())
	}
	o.free() // the slots too: grown again next
	if kg, err = kern.Alloc[T](m.dev, n); err != nil {
		return nil, nil, err
	}
	if vg, err = kern.Alloc[T](m.dev, n); err != nil {
		kg.Free()
		return nil, nil, err
	}
	o.kg, o.vg = kg, vg
	return kg, vg, nil
}

func opsLayers[T ops.Half16](m *Model, pool *KVPool, w *workspace, st *opsStep, all bool) error {
	cfg := m.Config
	R, S, H, D, hd := w.R, w.S, cfg.HiddenSize, cfg.HeadDim, m.ops.hd
	nh, nkv, I := cfg.NumAttentionHeads, cfg.NumKeyValueHeads, cfg.IntermediateSize
	eps := float32(cfg.RMSNormEps)
	step := func(layer int, what string, err error) error {
		switch {
		case err == nil:
			return nil
		case layer < 0:
			return fmt.Errorf("qwen3: %s: %w", what, err)
		}
		return fmt.Errorf("qwen3: layer %d: %s: %w", layer, what, err)
	}
	if w.ob == nil {
		b, err := newOpsBufs[T](m, R, S)
		if err != nil {
			return fmt.Errorf("qwen3: ops workspace for %d rows: %w", R, err)
		}
		w.ob = b
	}
	b := w.ob.(*opsBufs[T])
	decode := R == S // every sequence decodes one token: paged attention
	// Decode attention is split-K over the longest sequence the page
	// table can hold, not the batch's longest: a grid fixed per shape (a
	// graph can replay it), splits past a sequence's end skipped.
	pagedLen := w.P * pool.PageSize
	part := m.ops.partition
	if part == 0 {
		part = ops.DecodePartition(m.dev.Multiprocessors(), 1, nh, nkv, pagedLen)
	}
	// The projections' kernel family, by the step's kind alone (batch
	// invariance, ops.go).
	kind := ops.KernelTiles
	if decode {
		kind = ops.KernelGEMV
	}
	// Every projection passes StaticWeights: the weights are uploaded at
	// load and no kernel writes them, so on a GPU with programmatic
	// dependent launch the decode GEMVs stream them while the kernel
	// before each finishes (ops.MatmulOpts).
	// The block table and lengths are copied from the host each step.
	paged := ops.Paged{Heads: nh, KVHeads: nkv, HeadDim: hd, PageSize: pool.PageSize, MaxPages: w.P,
		Scale: float32(1 / math.Sqrt(float64(D))), Partition: part, HostTables: true}
	// A decode step of few sequences: each layer one persistent launch
	// (mega.go), if the model's layer allows this many.
	mega := decode && m.Trace == nil && m.ops.persistent && S <= megaMaxSeqs(*cfg)
	if mega && b.mega == nil {
		s, err := newMegaState[T](m, m.queue(), m.ops.persistentGrid)
		if err != nil {
			return err
		}
		b.mega = s
	}
	if mega && S > b.mega.plan.maxS {
		mega = false // the device's shared memory holds fewer sequences' inputs
	}
	if mega {
		m.ops.persistentSteps++
		m.ops.lastMega = b.mega
	}
	// PagedAttention's split-K scratch, for the steps that run it.
	if n := paged.Splits(pagedLen); decode && !mega && n > 1 && n > b.splits {
		sc, err := ops.NewSplitScratch(m.dev, S, nh, hd, n)
		if err != nil {
			return fmt.Errorf("qwen3: attention split-K scratch: %w", err)
		}
		if b.split != nil {
			b.split.Free()
		}
		b.split, b.splits = sc, n
	}
	var kg, vg *kern.Buffer[T]
	var slots *kern.Buffer[int32]
	nk := len(st.kvSlots)
	if !decode {
		var err error
		if kg, vg, err = growKV[T](m, nk*nkv*hd); err == nil {
			slots, err = grow(m.dev, &m.ops.slots, nk)
		}
		if err != nil {
			return fmt.Errorf("qwen3: attention keys of %d positions: %w", nk, err)
		}
		xs := make([]int32, slots.Len())
		copy(xs, st.kvSlots)
		if err := slots.CopyFrom(xs); err != nil {
			return fmt.Errorf("qwen3: batch tables: %w", err)
		}
	}
	// run is the step's launches (no allocation, no copy: what a decode
	// graph records).
	run := func() error {
		q := m.queue()
		if st.upload {
			if err := step(-1, "batch tables", w.tables.CopyFromHost(q, w.hostTables)); err != nil {
				return err
			}
		}
		if err := step(-1, "embedding", m.embedRows(w)); err != nil {
			return err
		}
		if err := m.trace("embed", -1, w.x, R, H); err != nil {
			return err
		}
		scale := float32(1 / math.Sqrt(float64(D)))
		ratio := math.Pow(cfg.RopeTheta, -2/float64(D))
		fused := hd == D // ops.KVCacheWrite's RoPE pairs (i, i+hd/2): right only unpadded
		// normCast is RMSNorm of x into the projections' input type out;
		// traced, through h32 (what the trace reads) and a cast.
		normCast := func(q kern.Queue, out *kern.Buffer[T], h32, x, weight *kern.Buffer[float32]) error {
			if m.Trace == nil {
				return rmsNormCastLaunch(q, out, x, weight, R, H, eps)
			}
			if err := ops.RMSNorm(q, h32, x, weight, R, H, eps); err != nil {
				return err
			}
			return ops.Cast(q, out, h32, R*H)
		}
		// norm is the RMSNorm before a projection: in a decode step
		// without a trace, an option of the projection's Matmul (the GEMV
		// normalises its rows itself: two launches a layer fewer, the
		// same bits; ops/matmul_norm.go), else normCast into b.h first.
		fuseNorm := decode && m.Trace == nil && !m.ops.normLaunches
		norm := func(x, weight *kern.Buffer[float32]) (*ops.MatmulRMSNorm, error) {
			if fuseNorm {
				return &ops.MatmulRMSNorm{X: x, Weight: weight, Eps: eps}, nil
			}
			return nil, normCast(q, b.h, w.h, x, weight)
		}
		for i, y := range m.layers {
			s := func(what string, err error) error { return step(i, what, err) }
			tr := func(stage string, x *kern.Buffer[float32], cols int) error { return m.trace(stage, i, x, R, cols) }
			kc, vc := poolKV[T](pool, i)
			if mega {
				var next *layer
				if i+1 < len(m.layers) {
					next = &m.layers[i+1]
				}
				if err := s("persistent layer", megaLaunch(m, q, b.mega, b, w, i, next, kc, vc, pool.PageSize)); err != nil {
					return err
				}
				continue
			}
			inNorm, err := norm(w.x, y.inNorm)
			if err := s("input_layernorm", err); err != nil {
				return err
			}
			if err := tr("attn_norm", w.h, H); err != nil {
				return err
			}
			// q, k and v in one projection (stackQKV), then apart.
			err = ops.Matmul(q, b.qkv, b.h, wbuf[T](y.q), R, y.q.Out, H, ops.MatmulOpts[float32]{Kernel: kind, StaticWeights: true, RMSNorm: inNorm})
			if err := s(y.q.Name, err); err != nil {
				return err
			}
			if m.Trace == nil {
				// Everything between the projection and attention in one
				// launch (opsfused.go).
				err := qkvPrepLaunch(q, b.q, kc, vc, b.qkv, y.qNorm, y.kNorm, w.pos, w.slot, R, nh, nkv, D, hd, eps, ratio)
				if err := s("q/k/v preparation", err); err != nil {
					return err
				}
			} else {
				qOut, kOut := w.q, w.k
				if y.qNorm == nil {
					qOut, kOut = w.qr, w.kr
				}
				if err := s("split qkv", splitQKVKernel.Launch(q, kern.Cover(b.qkv.Len()), qOut, kOut, w.v, b.qkv, cfg.QDim(), cfg.KVDim())); err != nil {
					return err
				}
				if y.qNorm != nil {
					if err := s("q_norm", ops.HeadRMSNorm(q, w.qr, w.q, y.qNorm, R, nh, D, eps)); err != nil {
						return err
					}
					if err := s("k_norm", ops.HeadRMSNorm(q, w.kr, w.k, y.kNorm, R, nkv, D, eps)); err != nil {
						return err
					}
				}
				if err := s("rope q", ropeRowsKernel.Launch(q, kern.Cover(R*cfg.QDim()/2), w.q, w.qr, w.pos, nh, D, ratio)); err != nil {
					return err
				}
				kIn := w.kr // what the cache write reads: rotated by it when fused
				if !fused || m.Trace != nil {
					if err := s("rope k", ropeRowsKernel.Launch(q, kern.Cover(R*cfg.KVDim()/2), w.k, w.kr, w.pos, nkv, D, ratio)); err != nil {
						return err
					}
					if !fused {
						kIn = w.k
					}
				}
				for _, p := range []struct {
					stage string
					x     *kern.Buffer[float32]
					cols  int
				}{{"q", w.q, cfg.QDim()}, {"k", w.k, cfg.KVDim()}, {"v", w.v, cfg.KVDim()}} {
					if err := tr(p.stage, p.x, p.cols); err != nil {
						return err
					}
				}
				for _, p := range []struct {
					out *kern.Buffer[T]
					x   *kern.Buffer[float32]
				}{{b.q, w.q}, {b.k, kIn}, {b.v, w.v}} {
					if err := s("pad and cast", padCastLaunch(q, p.out, p.x, D, hd)); err != nil {
						return err
					}
				}
				theta := 0.0
				if fused {
					theta = cfg.RopeTheta
				}
				err := ops.KVCacheWrite(q, kc, vc, b.k, b.v, w.slot, w.pos, ops.KVWrite{Tokens: R, KVHeads: nkv, HeadDim: hd, Theta: theta})
				if err := s("cache write", err); err != nil {
					return err
				}
			}
			if decode {
				err = ops.PagedAttention(q, b.a, b.q, kc, vc, w.table, w.seqLens, pagedLen, paged, b.split)
			} else {
				n := nk * nkv * hd
				if err = gatherKVLaunch(q, kg, kc, slots, nkv*hd, n); err == nil {
					err = gatherKVLaunch(q, vg, vc, slots, nkv*hd, n)
				}
				if err == nil {
					err = ops.FlashAttention(q, b.a, b.q, kg, vg, nil, w.cuQ, w.cuK,
						ops.Attention{Heads: nh, KVHeads: nkv, HeadDim: hd, Scale: scale, Causal: true, MaxSeqQ: st.maxQ})
				}
			}
			if err := s("attention", err); err != nil {
				return err
			}
			if b.au != b.a {
				if err := s("unpad", unpadLaunch(q, b.au, b.a, D, hd)); err != nil {
					return err
				}
			}
			if m.Trace != nil {
				if err := s("attention cast", ops.Cast(q, b.a32, b.au, R*cfg.QDim())); err != nil {
					return err
				}
				if err := tr("attn", b.a32, cfg.QDim()); err != nil {
					return err
				}
			}
			// x2 = x + a·Woᵀ
			err = ops.Matmul(q, w.x2, b.au, wbuf[T](y.o), R, H, cfg.QDim(), ops.MatmulOpts[float32]{Residual: w.x, Kernel: kind, StaticWeights: true})
			if err := s("o_proj", err); err != nil {
				return err
			}
			if err := tr("attn_res", w.x2, H); err != nil {
				return err
			}
			postNorm, err := norm(w.x2, y.postNorm)
			if err := s("post_attention_layernorm", err); err != nil {
				return err
			}
			if err := tr("mlp_norm", w.h, H); err != nil {
				return err
			}
			err = ops.Matmul(q, b.act, b.h, wbuf[T](y.gate), R, 2*I, H, ops.MatmulOpts[T]{Act: ops.ActSwiGLU, Kernel: kind, StaticWeights: true, RMSNorm: postNorm})
			if err := s("gate_up_proj", err); err != nil {
				return err
			}
			// x = x2 + act·Wdownᵀ
			err = ops.Matmul(q, w.x, b.act, wbuf[T](y.down), R, H, I, ops.MatmulOpts[float32]{Residual: w.x2, Kernel: kind, StaticWeights: true})
			if err := s("down_proj", err); err != nil {
				return err
			}
			if err := tr("out", w.x, H); err != nil {
				return err
			}
		}
		L, V := cfg.NumHiddenLayers, cfg.VocabSize
		lm := wbuf[T](m.lmHead)
		// The final norm of each sequence's last row, then lm_head. In a
		// decode step every sequence's last row is its only one, row i
		// of x (checkStep refuses a sequence without tokens, so R = S is
		// one token each and forward's lastRow the identity): no gather,
		// and the norm fused into the lm_head GEMV as into the layers'.
		var finalNorm *ops.MatmulRMSNorm
		if fuseNorm {
			finalNorm = &ops.MatmulRMSNorm{X: w.x, Weight: m.norm, Eps: eps}
		} else {
			if err := step(-1, "last rows", gatherRowsKernel.Launch(q, kern.Cover(S*H), w.hl, w.x, w.lastRow, H)); err != nil {
				return err
			}
			if err := step(-1, "final norm", rmsNormCastLaunch(q, b.hn, w.hl, m.norm, S, H, eps)); err != nil {
				return err
			}
		}
		if err := step(-1, "lm_head", ops.Matmul(q, w.logitsLast, b.hn, lm, S, V, H, ops.MatmulOpts[float32]{Kernel: kind, StaticWeights: true, RMSNorm: finalNorm})); err != nil {
			return err
		}
		if st.pick {
			if err := step(-1, "candidates", m.pickCandidates(q, w)); err != nil {
				return err
			}
		}
		if !all {
			return nil
		}
		if err := step(-1, "final norm", ops.RMSNorm(q, w.h, w.x, m.norm, R, H, eps)); err != nil {
			return err
		}
		if err := m.trace("norm", L, w.h, R, H); err != nil {
			return err
		}
		if err := step(-1, "final norm cast", ops.Cast(q, b.h, w.h, R*H)); err != nil {
			return err
		}
		if err := step(-1, "lm_head", ops.Matmul(q, w.logits, b.h, lm, R, V, H, ops.MatmulOpts[float32]{Kernel: kind, StaticWeights: true})); err != nil {
			return err
		}
		return m.trace("logits", L, w.logits, R, V)
	}
	if m.viaGraph(w, all) {
		return m.replay(w, run)
	}
	return run()
}

// viaGraph reports whether a step on the ops path runs through its
// decode graph (graph.go): a decode step (a token a sequence), graphs on,
// no trace, no logits of every row.
func (m *Model) viaGraph(w *workspace, all bool) bool {
	return w.R == w.S && !all && m.graphs && m.Trace == nil
}
