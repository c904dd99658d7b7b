package qwen3

// The model: loading, and the forward pass over a batch of positions of
// one sequence (prefill: the prompt; decode: one token).

import (
	"errors"
	"fmt"
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/llm/safetensors"
	"github.com/gokern/kern/ops"
)

// layer is one decoder layer's weights. Norm scales are float32.
type layer struct {
	inNorm, postNorm, qNorm, kNorm *kern.Buffer[float32]
	q, k, v, o, gate, up, down     *Weight
}

// Model is a loaded Qwen3 model on a device. Forward calls on one Model
// must not run concurrently (they share the workspace).
type Model struct {
	Config *Config
	Gen    *GenerationConfig
	// Matmul is the matrix multiply every projection goes through.
	Matmul Matmul
	// Trace, if set, is called after each stage of Forward with the
	// stage's output [rows, cols]: "embed" (layer -1), per layer
	// "attn_norm", "q", "k" (after QK-norm and RoPE), "v", "attn"
	// (attention before o_proj), "attn_res" (residual after attention),
	// "mlp_norm", "mlp" (down_proj output), "out" (residual after the
	// layer), then "norm" and "logits" (layer NumHiddenLayers). Tests use
	// it to compare each layer against a reference.
	Trace func(stage string, layer int, x *kern.Buffer[float32], rows, cols int) error

	dev    *kern.Device
	embed  *Weight // [vocab, hidden]
	norm   *kern.Buffer[float32]
	lmHead *Weight // the embedding when tied
	layers []layer
	ws     *workspace
}

// LoadOptions tune Load. The zero value is fine.
type LoadOptions struct {
	// Progress is called after each tensor with the bytes loaded so far
	// and the total.
	Progress func(done, total int64)
}

// Load reads a Hugging Face model directory (config.json,
// generation_config.json, model.safetensors or its sharded index) and
// uploads the weights to dev.
func Load(dev *kern.Device, dir string, opt LoadOptions) (*Model, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	gen, err := LoadGenerationConfig(dir)
	if err != nil {
		return nil, err
	}
	set, err := safetensors.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	m := &Model{Config: cfg, Gen: gen, Matmul: WarpMatmul{}, dev: dev}
	l := &loader{dev: dev, set: set, progress: opt.Progress, total: set.Bytes()}
	if err := m.load(l); err != nil {
		m.Free()
		return nil, err
	}
	return m, nil
}

func (m *Model) load(l source) error {
	c := m.Config
	H, V, I := c.HiddenSize, c.VocabSize, c.IntermediateSize
	var err error
	if m.embed, err = l.matrix("model.embed_tokens.weight", V, H); err != nil {
		return err
	}
	if m.norm, err = l.vector("model.norm.weight", H); err != nil {
		return err
	}
	switch {
	case c.TieWordEmbeddings:
		m.lmHead = m.embed
	case !l.has("lm_head.weight"):
		return fmt.Errorf("qwen3: %s: tie_word_embeddings is false but there is no lm_head.weight", l.where())
	default:
		if m.lmHead, err = l.matrix("lm_head.weight", V, H); err != nil {
			return err
		}
	}
	for i := 0; i < c.NumHiddenLayers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		var y layer
		steps := []func() error{
			func() (err error) { y.inNorm, err = l.vector(p+"input_layernorm.weight", H); return },
			func() (err error) { y.postNorm, err = l.vector(p+"post_attention_layernorm.weight", H); return },
			func() (err error) { y.qNorm, err = l.vector(p+"self_attn.q_norm.weight", c.HeadDim); return },
			func() (err error) { y.kNorm, err = l.vector(p+"self_attn.k_norm.weight", c.HeadDim); return },
			func() (err error) { y.q, err = l.matrix(p+"self_attn.q_proj.weight", c.QDim(), H); return },
			func() (err error) { y.k, err = l.matrix(p+"self_attn.k_proj.weight", c.KVDim(), H); return },
			func() (err error) { y.v, err = l.matrix(p+"self_attn.v_proj.weight", c.KVDim(), H); return },
			func() (err error) { y.o, err = l.matrix(p+"self_attn.o_proj.weight", H, c.QDim()); return },
			func() (err error) { y.gate, err = l.matrix(p+"mlp.gate_proj.weight", I, H); return },
			func() (err error) { y.up, err = l.matrix(p+"mlp.up_proj.weight", I, H); return },
			func() (err error) { y.down, err = l.matrix(p+"mlp.down_proj.weight", H, I); return },
		}
		m.layers = append(m.layers, y) // so Free releases a partly loaded layer
		for _, s := range steps {
			if err := s(); err != nil {
				m.layers[i] = y
				return err
			}
		}
		m.layers[i] = y
	}
	return nil
}

// Device is the device the model runs on.
func (m *Model) Device() *kern.Device { return m.dev }

// Free releases the model's device memory.
func (m *Model) Free() {
	for _, w := range []*Weight{m.embed, m.lmHead} {
		if w != nil && (w != m.lmHead || m.lmHead != m.embed) {
			w.free()
		}
	}
	if m.norm != nil {
		m.norm.Free()
	}
	for _, y := range m.layers {
		for _, b := range []*kern.Buffer[float32]{y.inNorm, y.postNorm, y.qNorm, y.kNorm} {
			if b != nil {
				b.Free()
			}
		}
		for _, w := range []*Weight{y.q, y.k, y.v, y.o, y.gate, y.up, y.down} {
			if w != nil {
				w.free()
			}
		}
	}
	m.layers = nil
	m.ws.free()
	m.ws = nil
}

// workspace is the activations of one Forward of T tokens, kept for the
// next call with the same T (every decode step).
type workspace struct {
	T                      int
	ids                    *kern.Buffer[int32]
	emb16                  *kern.Buffer[gpu.BFloat16]
	emb16h                 *kern.Buffer[gpu.Half]
	x, x2, h, hl, hn, a, o *kern.Buffer[float32] // [T, hidden] ([1, hidden] for hl, hn), a [T, qdim]
	q, qr, k, kr, v        *kern.Buffer[float32]
	gate, up, act          *kern.Buffer[float32]
	scores                 *kern.Buffer[float32]
	scoreCap               int
	logits, logits1        *kern.Buffer[float32]
}

func (w *workspace) free() {
	if w == nil {
		return
	}
	for _, b := range []*kern.Buffer[float32]{w.x, w.x2, w.h, w.hl, w.hn, w.a, w.o, w.q, w.qr, w.k, w.kr, w.v, w.gate, w.up, w.act, w.scores, w.logits, w.logits1} {
		if b != nil {
			b.Free()
		}
	}
	if w.ids != nil {
		w.ids.Free()
	}
	if w.emb16 != nil {
		w.emb16.Free()
	}
	if w.emb16h != nil {
		w.emb16h.Free()
	}
}

func (m *Model) workspace(T int) (*workspace, error) {
	if m.ws != nil && m.ws.T == T {
		return m.ws, nil
	}
	m.ws.free()
	m.ws = nil
	c := m.Config
	w := &workspace{T: T}
	var errs []error
	f := func(n int) *kern.Buffer[float32] {
		b, err := kern.Alloc[float32](m.dev, n)
		errs = append(errs, err)
		return b
	}
	H := c.HiddenSize
	w.x, w.x2, w.h, w.o = f(T*H), f(T*H), f(T*H), f(T*H)
	w.hl, w.hn = f(H), f(H)
	w.a, w.q, w.qr = f(T*c.QDim()), f(T*c.QDim()), f(T*c.QDim())
	w.k, w.kr, w.v = f(T*c.KVDim()), f(T*c.KVDim()), f(T*c.KVDim())
	w.gate, w.up, w.act = f(T*c.IntermediateSize), f(T*c.IntermediateSize), f(T*c.IntermediateSize)
	w.logits, w.logits1 = f(T*c.VocabSize), f(c.VocabSize)
	var err error
	w.ids, err = kern.Alloc[int32](m.dev, T)
	errs = append(errs, err)
	switch m.embed.DType {
	case safetensors.BF16:
		w.emb16, err = kern.Alloc[gpu.BFloat16](m.dev, T*H)
		errs = append(errs, err)
	case safetensors.F16:
		w.emb16h, err = kern.Alloc[gpu.Half](m.dev, T*H)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		w.free()
		return nil, fmt.Errorf("qwen3: workspace for %d tokens: %w", T, err)
	}
	m.ws = w
	return w, nil
}

// scratch returns the attention score buffer with room for n floats.
func (w *workspace) scratch(dev *kern.Device, n int) (*kern.Buffer[float32], error) {
	if w.scores != nil && w.scoreCap >= n {
		return w.scores, nil
	}
	if w.scores != nil {
		w.scores.Free()
	}
	n = max(n, 2*w.scoreCap)
	b, err := kern.Alloc[float32](dev, n)
	if err != nil {
		return nil, fmt.Errorf("qwen3: attention scratch: %w", err)
	}
	w.scores, w.scoreCap = b, n
	return b, nil
}

// Forward runs tokens (positions c.Len … c.Len+len(tokens)-1) through the
// model, appends their keys and values to c, and returns the logits: of
// every token ([len(tokens), vocab]) if all, else of the last one
// ([vocab]). The returned buffer belongs to the model and is overwritten
// by the next Forward.
func (m *Model) Forward(c *Cache, tokens []int32, all bool) (*kern.Buffer[float32], error) {
	T := len(tokens)
	cfg := m.Config
	switch {
	case T == 0:
		return nil, errors.New("qwen3: Forward of no tokens")
	case c.Len+T > c.Cap:
		return nil, fmt.Errorf("qwen3: %d tokens after %d cached exceed the cache's %d positions", T, c.Len, c.Cap)
	}
	for i, id := range tokens {
		if id < 0 || int(id) >= cfg.VocabSize {
			return nil, fmt.Errorf("qwen3: token %d (index %d) is outside the vocabulary [0, %d)", id, i, cfg.VocabSize)
		}
	}
	w, err := m.workspace(T)
	if err != nil {
		return nil, err
	}
	if err := w.ids.CopyFrom(tokens); err != nil {
		return nil, fmt.Errorf("qwen3: %w", err)
	}
	if err := m.forward(c, w, all); err != nil {
		return nil, err
	}
	c.Len += T
	if all {
		return w.logits, nil
	}
	return w.logits1, nil
}

func (m *Model) trace(stage string, layer int, x *kern.Buffer[float32], rows, cols int) error {
	if m.Trace == nil {
		return nil
	}
	return m.Trace(stage, layer, x, rows, cols)
}

// forward is the pass itself; errors name the layer and the step.
func (m *Model) forward(c *Cache, w *workspace, all bool) error {
	cfg := m.Config
	T, H, D := w.T, cfg.HiddenSize, cfg.HeadDim
	eps := float32(cfg.RMSNormEps)
	q := m.dev
	step := func(layer int, what string, err error) error {
		if err == nil {
			return nil
		}
		if layer < 0 {
			return fmt.Errorf("qwen3: %s: %w", what, err)
		}
		return fmt.Errorf("qwen3: layer %d: %s: %w", layer, what, err)
	}

	var err error
	switch {
	case w.emb16 != nil:
		if err = ops.Embedding(q, w.emb16, m.embed.bf16, w.ids, cfg.VocabSize, H); err == nil {
			err = ops.Cast(q, w.x, w.emb16, T*H)
		}
	case w.emb16h != nil:
		if err = ops.Embedding(q, w.emb16h, m.embed.f16, w.ids, cfg.VocabSize, H); err == nil {
			err = ops.Cast(q, w.x, w.emb16h, T*H)
		}
	default:
		err = ops.Embedding(q, w.x, m.embed.f32, w.ids, cfg.VocabSize, H)
	}
	if err := step(-1, "embedding", err); err != nil {
		return err
	}
	if err := m.trace("embed", -1, w.x, T, H); err != nil {
		return err
	}
	ctx := c.Len + T
	scores, err := w.scratch(m.dev, T*cfg.NumAttentionHeads*ctx)
	if err != nil {
		return err
	}
	scale := float32(1 / math.Sqrt(float64(D)))
	for i, y := range m.layers {
		s := func(what string, err error) error { return step(i, what, err) }
		tr := func(stage string, x *kern.Buffer[float32], cols int) error { return m.trace(stage, i, x, T, cols) }
		if err := s("input_layernorm", ops.RMSNorm(q, w.h, w.x, y.inNorm, T, H, eps)); err != nil {
			return err
		}
		if err := tr("attn_norm", w.h, H); err != nil {
			return err
		}
		for _, p := range []struct {
			out *kern.Buffer[float32]
			w   *Weight
		}{{w.q, y.q}, {w.k, y.k}, {w.v, y.v}} {
			if err := s("projection", m.Matmul.MatmulT(q, p.out, w.h, p.w, T)); err != nil {
				return err
			}
		}
		if err := s("q_norm", ops.HeadRMSNorm(q, w.qr, w.q, y.qNorm, T, cfg.NumAttentionHeads, D, eps)); err != nil {
			return err
		}
		if err := s("k_norm", ops.HeadRMSNorm(q, w.kr, w.k, y.kNorm, T, cfg.NumKeyValueHeads, D, eps)); err != nil {
			return err
		}
		if err := s("rope q", ops.RoPE(q, w.q, w.qr, T, cfg.NumAttentionHeads, D, c.Len, cfg.RopeTheta)); err != nil {
			return err
		}
		if err := s("rope k", ops.RoPE(q, w.k, w.kr, T, cfg.NumKeyValueHeads, D, c.Len, cfg.RopeTheta)); err != nil {
			return err
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
		kv := cfg.KVDim()
		if err := s("cache K", copyF32Kernel.Launch(q, kern.Cover(T*kv), c.k[i], w.k, c.Len*kv, 0, T*kv)); err != nil {
			return err
		}
		if err := s("cache V", copyF32Kernel.Launch(q, kern.Cover(T*kv), c.v[i], w.v, c.Len*kv, 0, T*kv)); err != nil {
			return err
		}
		grid := kern.Blocks(gpu.Dim3{X: T * cfg.NumAttentionHeads, Y: 1, Z: 1}, gpu.Dim3{X: 32, Y: 1, Z: 1})
		err := attentionKernel.Launch(q, grid, w.a, w.q, c.k[i], c.v[i], scores, cfg.NumAttentionHeads, cfg.NumKeyValueHeads, D, c.Len, ctx, scale)
		if err := s("attention", err); err != nil {
			return err
		}
		if err := tr("attn", w.a, cfg.QDim()); err != nil {
			return err
		}
		if err := s("o_proj", m.Matmul.MatmulT(q, w.o, w.a, y.o, T)); err != nil {
			return err
		}
		// x2 = x + o; h = RMSNorm(x2)
		if err := s("post_attention_layernorm", ops.AddRMSNorm(q, w.h, w.x2, w.x, w.o, y.postNorm, T, H, eps)); err != nil {
			return err
		}
		if err := tr("attn_res", w.x2, H); err != nil {
			return err
		}
		if err := tr("mlp_norm", w.h, H); err != nil {
			return err
		}
		if err := s("gate_proj", m.Matmul.MatmulT(q, w.gate, w.h, y.gate, T)); err != nil {
			return err
		}
		if err := s("up_proj", m.Matmul.MatmulT(q, w.up, w.h, y.up, T)); err != nil {
			return err
		}
		if err := s("silu·up", ops.SiLUMul(q, w.act, w.gate, w.up, T*cfg.IntermediateSize)); err != nil {
			return err
		}
		if err := s("down_proj", m.Matmul.MatmulT(q, w.o, w.act, y.down, T)); err != nil {
			return err
		}
		if err := tr("mlp", w.o, H); err != nil {
			return err
		}
		if err := s("residual", ops.Add(q, w.x, w.x2, w.o, T*H)); err != nil {
			return err
		}
		if err := tr("out", w.x, H); err != nil {
			return err
		}
	}
	L, V := cfg.NumHiddenLayers, cfg.VocabSize
	if !all {
		// Only the last position's logits: norm and project one row.
		if err := step(-1, "last row", copyF32Kernel.Launch(q, kern.Cover(H), w.hl, w.x, 0, (T-1)*H, H)); err != nil {
			return err
		}
		if err := step(-1, "final norm", ops.RMSNorm(q, w.hn, w.hl, m.norm, 1, H, eps)); err != nil {
			return err
		}
		return step(-1, "lm_head", m.Matmul.MatmulT(q, w.logits1, w.hn, m.lmHead, 1))
	}
	if err := step(-1, "final norm", ops.RMSNorm(q, w.h, w.x, m.norm, T, H, eps)); err != nil {
		return err
	}
	if err := m.trace("norm", L, w.h, T, H); err != nil {
		return err
	}
	if err := step(-1, "lm_head", m.Matmul.MatmulT(q, w.logits, w.h, m.lmHead, T)); err != nil {
		return err
	}
	return m.trace("logits", L, w.logits, T, V)
}
