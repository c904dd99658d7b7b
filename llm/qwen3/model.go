package qwen3

// The model: loading, and the forward pass over a batch of positions of
// one sequence (prefill: the prompt; decode: one token).

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/safetensors"
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
	// Matmul is the matrix multiply every projection of the float32 path
	// goes through: DefaultMatmul(dev) to start with (WarpMatmul, or
	// ThreadMatmul on the native device), or OpsMatmul (ops.Matmul,
	// float32-accurate).
	// The ops path (UseOps) calls ops.Matmul itself.
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
	ws     map[wsKey]*workspace  // by batch shape, see forward.go
	scores *kern.Buffer[float32] // attention scratch, grown as needed
	tp     *shard                // a tensor-parallel rank's state (shard.go), or nil
	ops    *opsState             // the ops path's state (ops.go), or nil
	// capture is the stream a decode graph is being recorded on (graph.go).
	capture *kern.Stream
	stream  *kern.Stream // decode graphs' (graph.go)
	graphs  bool
	replays int
	// candK is SetDecodeCandidates's k (0: off); lastCand the last
	// step's candidates in host memory, nil when it made none
	// (candidates.go).
	candK    int
	lastCand []uint64
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
	m := &Model{Config: cfg, Gen: gen, Matmul: DefaultMatmul(dev), dev: dev}
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
			func() (err error) {
				if c.NoQKNorm { // Llama
					return nil
				}
				y.qNorm, err = l.vector(p+"self_attn.q_norm.weight", c.HeadDim)
				return
			},
			func() (err error) {
				if c.NoQKNorm {
					return nil
				}
				y.kNorm, err = l.vector(p+"self_attn.k_norm.weight", c.HeadDim)
				return
			},
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
	if m.embed != nil {
		m.embed.free()
	}
	if m.lmHead != nil && m.lmHead != m.embed {
		m.lmHead.free()
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
			if w != nil { // up is nil on the ops path (in gate)
				w.free()
			}
		}
	}
	m.layers = nil
	for _, w := range m.ws {
		w.free()
	}
	m.ws = nil
	if m.tp != nil {
		m.tp.free()
	}
	if m.scores != nil {
		m.scores.Free()
		m.scores = nil
	}
	if m.ops != nil {
		m.ops.freeAll()
	}
	if f, ok := m.Matmul.(interface{ Free() }); ok { // OpsMatmul's scratch
		f.Free()
	}
	if m.stream != nil { // after the workspaces' graphs
		m.stream.Close()
		m.stream = nil
	}
}
