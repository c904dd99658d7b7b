package qwen3

// Models from GGUF files (llama.cpp's format): the Llama architecture,
// which is this forward pass without QK-norm. The GGUF metadata becomes a
// Config, GGUF tensor names map to the Hugging Face names model.go asks
// for, and each tensor is dequantised on the host (Q4_1, Q8_0, F16, …) and
// uploaded as float32, so the forward pass computes exactly over the
// values the file encodes.
//
// llama.cpp's converter permutes the rows of a Llama's q and k weights so
// that ggml's RoPE can rotate adjacent pairs (x[2i], x[2i+1]); this
// engine's RoPE rotates halves (x[i], x[i+D/2]) as transformers does, so
// the loader undoes the permutation.

import (
	"fmt"
	"strings"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/gguf"
	"github.com/gokern/kern/llm/safetensors"
)

// ConfigFromGGUF reads a Llama GGUF's shape from its metadata.
func ConfigFromGGUF(g *gguf.File) (*Config, error) {
	arch, err := g.String("general.architecture")
	if err != nil {
		return nil, fmt.Errorf("qwen3: %w", err)
	}
	if arch != "llama" {
		return nil, fmt.Errorf("qwen3: %s: general.architecture %q: GGUF loading supports llama", g.Path, arch)
	}
	var errs []error
	get := func(key string, def int) int {
		if _, ok := g.Meta[arch+"."+key]; !ok && def >= 0 {
			return def
		}
		n, err := g.Int(arch + "." + key)
		if err != nil {
			errs = append(errs, err)
		}
		return n
	}
	getf := func(key string, def float64) float64 {
		if _, ok := g.Meta[arch+"."+key]; !ok {
			return def
		}
		f, err := g.Float(arch + "." + key)
		if err != nil {
			errs = append(errs, err)
		}
		return f
	}
	c := &Config{ModelType: "llama", HiddenAct: "silu"}
	c.HiddenSize = get("embedding_length", -1)
	c.IntermediateSize = get("feed_forward_length", -1)
	c.NumHiddenLayers = get("block_count", -1)
	c.NumAttentionHeads = get("attention.head_count", -1)
	c.NumKeyValueHeads = get("attention.head_count_kv", c.NumAttentionHeads)
	c.MaxPositionEmbeddings = get("context_length", 0)
	c.RMSNormEps = getf("attention.layer_norm_rms_epsilon", 1e-5)
	c.RopeTheta = getf("rope.freq_base", 10000)
	if len(errs) > 0 {
		return nil, fmt.Errorf("qwen3: %w", errs[0])
	}
	if c.NumAttentionHeads > 0 {
		c.HeadDim = get("attention.key_length", c.HiddenSize/c.NumAttentionHeads)
		if rd := get("rope.dimension_count", c.HeadDim); rd != c.HeadDim {
			return nil, fmt.Errorf("qwen3: %s: %s.rope.dimension_count = %d < head_dim %d: partial RoPE is not implemented", g.Path, arch, rd, c.HeadDim)
		}
	}
	if _, ok := g.Meta[arch+".rope.scaling.type"]; ok {
		if s, _ := g.String(arch + ".rope.scaling.type"); s != "none" {
			return nil, fmt.Errorf("qwen3: %s: rope scaling %q is not implemented", g.Path, s)
		}
	}
	emb, err := g.Tensor("token_embd.weight")
	if err != nil {
		return nil, fmt.Errorf("qwen3: %w", err)
	}
	if len(emb.Dims) != 2 {
		return nil, fmt.Errorf("qwen3: %s: token_embd.weight has dims %v, want 2", g.Path, emb.Dims)
	}
	c.VocabSize = get("vocab_size", emb.Dims[1])
	c.TieWordEmbeddings = !g.Has("output.weight")
	for _, k := range []struct {
		key string
		ids *IDs
	}{{"tokenizer.ggml.eos_token_id", &c.EOSTokenID}, {"tokenizer.ggml.bos_token_id", &c.BOSTokenID}} {
		if _, ok := g.Meta[k.key]; ok {
			id, err := g.Int(k.key)
			if err != nil {
				return nil, fmt.Errorf("qwen3: %w", err)
			}
			*k.ids = IDs{id}
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("qwen3: %w", errs[0])
	}
	if err := c.normalize(); err != nil {
		return nil, fmt.Errorf("qwen3: %s: %w", g.Path, err)
	}
	return c, nil
}

// LoadGGUF uploads a Llama GGUF's weights to dev. g stays the caller's
// to close (the tokenizer is built from the same file).
func LoadGGUF(dev *kern.Device, g *gguf.File, opt LoadOptions) (*Model, error) {
	cfg, err := ConfigFromGGUF(g)
	if err != nil {
		return nil, err
	}
	src := &ggufSource{dev: dev, g: g, cfg: cfg, progress: opt.Progress}
	for _, t := range g.Tensors {
		src.total += int64(len(t.Bytes()))
	}
	m := &Model{Config: cfg, Gen: &GenerationConfig{}, Matmul: DefaultMatmul(dev), dev: dev}
	if err := m.load(src); err != nil {
		m.Free()
		return nil, err
	}
	return m, nil
}

// ggufSource serves model.go's Hugging Face tensor names from a GGUF.
type ggufSource struct {
	dev      *kern.Device
	g        *gguf.File
	cfg      *Config
	done     int64
	total    int64
	progress func(done, total int64)
}

// ggufNames maps Hugging Face names to GGUF ones; per-layer names are
// the part after "model.layers.N.".
var ggufNames = map[string]string{
	"model.embed_tokens.weight":       "token_embd.weight",
	"model.norm.weight":               "output_norm.weight",
	"lm_head.weight":                  "output.weight",
	"input_layernorm.weight":          "attn_norm.weight",
	"post_attention_layernorm.weight": "ffn_norm.weight",
	"self_attn.q_proj.weight":         "attn_q.weight",
	"self_attn.k_proj.weight":         "attn_k.weight",
	"self_attn.v_proj.weight":         "attn_v.weight",
	"self_attn.o_proj.weight":         "attn_output.weight",
	"self_attn.q_norm.weight":         "attn_q_norm.weight",
	"self_attn.k_norm.weight":         "attn_k_norm.weight",
	"mlp.gate_proj.weight":            "ffn_gate.weight",
	"mlp.up_proj.weight":              "ffn_up.weight",
	"mlp.down_proj.weight":            "ffn_down.weight",
}

// ggufName translates a Hugging Face tensor name.
func ggufName(name string) (string, error) {
	if n, ok := ggufNames[name]; ok {
		return n, nil
	}
	var layer int
	var rest string
	if _, err := fmt.Sscanf(name, "model.layers.%d.%s", &layer, &rest); err == nil {
		if n, ok := ggufNames[rest]; ok {
			return fmt.Sprintf("blk.%d.%s", layer, n), nil
		}
	}
	return "", fmt.Errorf("qwen3: no GGUF name for tensor %q", name)
}

func (s *ggufSource) where() string { return s.g.Path }

func (s *ggufSource) has(name string) bool {
	n, err := ggufName(name)
	return err == nil && s.g.Has(n)
}

// values dequantises the tensor named (in Hugging Face terms) name and
// checks its dims against shape (outermost first, as PyTorch writes it).
func (s *ggufSource) values(name string, shape ...int) ([]float32, *gguf.Tensor, error) {
	gn, err := ggufName(name)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.g.Tensor(gn)
	if err != nil {
		return nil, nil, fmt.Errorf("qwen3: %w", err)
	}
	ok := len(t.Dims) == len(shape)
	for i := range shape {
		ok = ok && t.Dims[len(shape)-1-i] == shape[i]
	}
	if !ok {
		return nil, nil, fmt.Errorf("qwen3: %s: tensor %q has GGUF dims %v, want %v (innermost first) for %s", s.g.Path, gn, t.Dims, reverse(shape), name)
	}
	xs, err := t.Float32()
	if err != nil {
		return nil, nil, err
	}
	return xs, t, nil
}

func reverse(xs []int) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[len(xs)-1-i] = x
	}
	return out
}

func (s *ggufSource) advance(t *gguf.Tensor) {
	s.done += int64(len(t.Bytes()))
	if s.progress != nil {
		s.progress(s.done, s.total)
	}
}

func (s *ggufSource) matrix(name string, out, in int) (*Weight, error) {
	xs, t, err := s.values(name, out, in)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasSuffix(name, "q_proj.weight"):
		xs = unpermuteRoPE(xs, s.cfg.NumAttentionHeads, s.cfg.HeadDim, in)
	case strings.HasSuffix(name, "k_proj.weight"):
		xs = unpermuteRoPE(xs, s.cfg.NumKeyValueHeads, s.cfg.HeadDim, in)
	}
	w := &Weight{Name: name, Out: out, In: in, DType: safetensors.F32}
	if w.f32, err = kern.Upload(s.dev, xs); err != nil {
		return nil, fmt.Errorf("qwen3: uploading %s: %w", name, err)
	}
	s.advance(t)
	return w, nil
}

func (s *ggufSource) vector(name string, n int) (*kern.Buffer[float32], error) {
	xs, t, err := s.values(name, n)
	if err != nil {
		return nil, err
	}
	b, err := kern.Upload(s.dev, xs)
	if err != nil {
		return nil, fmt.Errorf("qwen3: uploading %s: %w", name, err)
	}
	s.advance(t)
	return b, nil
}

// unpermuteRoPE undoes llama.cpp's q/k row permutation: within each
// head of d rows, GGUF row 2i+j holds Hugging Face row j·d/2+i (i < d/2,
// j ∈ {0, 1}).
func unpermuteRoPE(w []float32, heads, d, in int) []float32 {
	out := make([]float32, len(w))
	for h := 0; h < heads; h++ {
		for i := 0; i < d/2; i++ {
			for j := 0; j < 2; j++ {
				src := (h*d + 2*i + j) * in
				dst := (h*d + j*d/2 + i) * in
				copy(out[dst:dst+in], w[src:src+in])
			}
		}
	}
	return out
}
