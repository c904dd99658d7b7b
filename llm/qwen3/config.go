package qwen3

// config.json and generation_config.json: the model's shape and its
// default generation settings, as Hugging Face writes them.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Config is the part of config.json the engine reads. Everything that
// shapes the forward pass comes from here; nothing is assumed from a
// model's name.
type Config struct {
	ModelType             string  `json:"model_type"`
	VocabSize             int     `json:"vocab_size"`
	HiddenSize            int     `json:"hidden_size"`
	IntermediateSize      int     `json:"intermediate_size"`
	NumHiddenLayers       int     `json:"num_hidden_layers"`
	NumAttentionHeads     int     `json:"num_attention_heads"`
	NumKeyValueHeads      int     `json:"num_key_value_heads"`
	HeadDim               int     `json:"head_dim"` // 0 in the file: hidden/heads
	MaxPositionEmbeddings int     `json:"max_position_embeddings"`
	RMSNormEps            float64 `json:"rms_norm_eps"`
	RopeTheta             float64 `json:"rope_theta"` // transformers 4.x; 5.x moved it to rope_parameters
	RopeParameters        *struct {
		RopeTheta float64 `json:"rope_theta"`
		RopeType  string  `json:"rope_type"`
	} `json:"rope_parameters"`
	RopeScaling       json.RawMessage `json:"rope_scaling"`
	TieWordEmbeddings bool            `json:"tie_word_embeddings"`
	HiddenAct         string          `json:"hidden_act"`
	AttentionBias     bool            `json:"attention_bias"`
	UseSlidingWindow  bool            `json:"use_sliding_window"`
	EOSTokenID        IDs             `json:"eos_token_id"`
	BOSTokenID        IDs             `json:"bos_token_id"`
	TorchDType        string          `json:"torch_dtype"`
	MLPBias           bool            `json:"mlp_bias"`

	// NoQKNorm is set for architectures without Qwen3's per-head RMSNorm
	// on q and k (model_type "llama"); the forward pass is otherwise the
	// same (bias-free projections, SwiGLU, RoPE on rotate-half pairs).
	NoQKNorm bool `json:"-"`
}

// IDs is a token id field that config files write as null, one number or
// a list.
type IDs []int

// UnmarshalJSON accepts null, an integer or a list of integers.
func (ids *IDs) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*ids = nil
		return nil
	}
	var one int
	if err := json.Unmarshal(b, &one); err == nil {
		*ids = IDs{one}
		return nil
	}
	var many []int
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a token id or a list of them, got %s", b)
	}
	*ids = many
	return nil
}

// LoadConfig reads and checks dir/config.json.
func LoadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("qwen3: %w", err)
	}
	var c Config
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("qwen3: %s: %v", path, err)
	}
	if err := c.normalize(); err != nil {
		return nil, fmt.Errorf("qwen3: %s: %w", path, err)
	}
	return &c, nil
}

// normalize fills defaults and rejects what this engine does not run.
func (c *Config) normalize() error {
	switch c.ModelType {
	case "qwen3":
	case "llama":
		c.NoQKNorm = true
	default:
		return fmt.Errorf("model_type %q: this engine runs qwen3 (dense) and llama", c.ModelType)
	}
	if c.HeadDim == 0 && c.NumAttentionHeads > 0 {
		c.HeadDim = c.HiddenSize / c.NumAttentionHeads
	}
	if c.NumKeyValueHeads == 0 {
		c.NumKeyValueHeads = c.NumAttentionHeads
	}
	if c.RopeParameters != nil && c.RopeParameters.RopeTheta != 0 && c.RopeTheta == 0 {
		c.RopeTheta = c.RopeParameters.RopeTheta
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = 10000 // transformers' default for Qwen3Config
	}
	if c.RMSNormEps == 0 {
		c.RMSNormEps = 1e-6
	}
	if c.HiddenAct == "" {
		c.HiddenAct = "silu"
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"vocab_size", c.VocabSize}, {"hidden_size", c.HiddenSize}, {"intermediate_size", c.IntermediateSize},
		{"num_hidden_layers", c.NumHiddenLayers}, {"num_attention_heads", c.NumAttentionHeads},
		{"num_key_value_heads", c.NumKeyValueHeads}, {"head_dim", c.HeadDim},
	} {
		if f.v <= 0 {
			return fmt.Errorf("%s = %d, want > 0", f.name, f.v)
		}
	}
	var errs []error
	if c.NumAttentionHeads%c.NumKeyValueHeads != 0 {
		errs = append(errs, fmt.Errorf("num_attention_heads = %d is not a multiple of num_key_value_heads = %d", c.NumAttentionHeads, c.NumKeyValueHeads))
	}
	if c.HeadDim%2 != 0 {
		errs = append(errs, fmt.Errorf("head_dim = %d, want an even number (RoPE rotates pairs)", c.HeadDim))
	}
	if c.HiddenAct != "silu" {
		errs = append(errs, fmt.Errorf("hidden_act %q: only silu is implemented", c.HiddenAct))
	}
	if c.AttentionBias {
		errs = append(errs, errors.New("attention_bias = true: Qwen3 has no attention bias and this engine implements none"))
	}
	if c.MLPBias {
		errs = append(errs, errors.New("mlp_bias = true: this engine implements no MLP bias"))
	}
	if c.UseSlidingWindow {
		errs = append(errs, errors.New("use_sliding_window = true: sliding-window attention is not implemented"))
	}
	if t := c.RopeParameters; t != nil && t.RopeType != "" && t.RopeType != "default" {
		errs = append(errs, fmt.Errorf("rope_type %q: only default RoPE is implemented", t.RopeType))
	}
	if len(c.RopeScaling) > 0 && string(c.RopeScaling) != "null" {
		errs = append(errs, fmt.Errorf("rope_scaling %s: RoPE scaling is not implemented", c.RopeScaling))
	}
	return errors.Join(errs...)
}

// QDim is heads·head_dim, the width of q and of attention's output; it
// may differ from hidden_size (Qwen3-0.6B: 16·128 = 2048 vs 1024).
func (c *Config) QDim() int { return c.NumAttentionHeads * c.HeadDim }

// KVDim is kv_heads·head_dim, the width of k and v.
func (c *Config) KVDim() int { return c.NumKeyValueHeads * c.HeadDim }

// GenerationConfig is generation_config.json: the defaults a model's
// authors recommend for sampling. Absent fields are zero.
type GenerationConfig struct {
	EOSTokenID        IDs     `json:"eos_token_id"`
	BOSTokenID        IDs     `json:"bos_token_id"`
	PadTokenID        IDs     `json:"pad_token_id"`
	DoSample          bool    `json:"do_sample"`
	Temperature       float64 `json:"temperature"`
	TopK              int     `json:"top_k"`
	TopP              float64 `json:"top_p"`
	MinP              float64 `json:"min_p"`
	RepetitionPenalty float64 `json:"repetition_penalty"`
}

// LoadGenerationConfig reads dir/generation_config.json; a missing file is
// an empty config, not an error (many checkpoints have none).
func LoadGenerationConfig(dir string) (*GenerationConfig, error) {
	path := filepath.Join(dir, "generation_config.json")
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &GenerationConfig{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("qwen3: %w", err)
	}
	var g GenerationConfig
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, fmt.Errorf("qwen3: %s: %v", path, err)
	}
	return &g, nil
}
