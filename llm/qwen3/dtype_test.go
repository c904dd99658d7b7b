package qwen3

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/llm/safetensors"
)

// writeRandomModel writes a Qwen3 checkpoint with random weights of one
// dtype to a temporary directory: shapes the fixtures lack (multi-query
// attention, head_dim·heads ≠ hidden, untied) in f32 and f16.
func writeRandomModel(t *testing.T, dtype safetensors.DType, kvHeads int) string {
	t.Helper()
	cfg := map[string]any{"model_type": "qwen3", "vocab_size": 50, "hidden_size": 32, "intermediate_size": 48,
		"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": kvHeads, "head_dim": 12,
		"rope_theta": 10000.0, "rms_norm_eps": 1e-5, "tie_word_embeddings": false, "max_position_embeddings": 64}
	rng := rand.New(rand.NewPCG(uint64(kvHeads), 7))
	entries := map[string]safetensors.Entry{}
	add := func(name string, norm bool, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		var b []byte
		for i := 0; i < n; i++ {
			v := float32(0.3 * rng.NormFloat64())
			if norm {
				v = 1 + v/3
			}
			switch dtype {
			case safetensors.F32:
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			case safetensors.F16:
				b = binary.LittleEndian.AppendUint16(b, uint16(gpu.ToHalf(v)))
			case safetensors.BF16:
				b = binary.LittleEndian.AppendUint16(b, uint16(gpu.ToBFloat16(v)))
			}
		}
		entries[name] = safetensors.Entry{DType: dtype, Shape: shape, Data: b}
	}
	H, Q, KV := 32, 4*12, kvHeads*12
	add("model.embed_tokens.weight", false, 50, H)
	add("lm_head.weight", false, 50, H)
	add("model.norm.weight", true, H)
	for l := 0; l < 2; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		add(p+"input_layernorm.weight", true, H)
		add(p+"post_attention_layernorm.weight", true, H)
		add(p+"self_attn.q_norm.weight", true, 12)
		add(p+"self_attn.k_norm.weight", true, 12)
		add(p+"self_attn.q_proj.weight", false, Q, H)
		add(p+"self_attn.k_proj.weight", false, KV, H)
		add(p+"self_attn.v_proj.weight", false, KV, H)
		add(p+"self_attn.o_proj.weight", false, H, Q)
		add(p+"mlp.gate_proj.weight", false, 48, H)
		add(p+"mlp.up_proj.weight", false, 48, H)
		add(p+"mlp.down_proj.weight", false, H, 48)
	}
	dir := t.TempDir()
	img, err := safetensors.Encode(entries)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), c, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDTypesAndShapes: f32 and f16 checkpoints, multi-query (1 KV head)
// and grouped (2) attention, untied, head_dim·heads ≠ hidden: every stage
// of every layer against the float64 reference, prefill and decode.
func TestDTypesAndShapes(t *testing.T) {
	for _, c := range []struct {
		dtype   safetensors.DType
		kvHeads int
	}{{safetensors.F32, 1}, {safetensors.F16, 2}, {safetensors.BF16, 4}} {
		t.Run(fmt.Sprintf("%s-kv%d", c.dtype, c.kvHeads), func(t *testing.T) {
			dir := writeRandomModel(t, c.dtype, c.kvHeads)
			m, err := Load(testDevices[0].dev, dir, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Free()
			if m.embed.DType != c.dtype {
				t.Errorf("embedding kept as %s, want %s", m.embed.DType, c.dtype)
			}
			ref := loadRef(t, dir)
			cache, err := m.NewCache(16)
			if err != nil {
				t.Fatal(err)
			}
			defer cache.Free()
			stages := 0
			var failed []string
			m.Trace = func(stage string, layer int, x *kern.Buffer[float32], rows, cols int) error {
				got, err := x.Download()
				if err != nil {
					return err
				}
				stages++
				if msg, _ := compareRows(got, ref.stages[fmt.Sprintf("%d/%s", layer, stage)], cols, stageRel); msg != "" {
					failed = append(failed, fmt.Sprintf("layer %d %s: %s", layer, stage, msg))
				}
				return nil
			}
			for i, in := range [][]int32{{1, 7, 33, 49, 0}, {12}, {40}} {
				ref.forward(in)
				failed = nil
				if _, err := m.Forward(cache, in, true); err != nil {
					t.Fatal(err)
				}
				for _, f := range failed {
					t.Errorf("step %d: %s", i, f)
				}
			}
			if want := 3 * (3 + 9*2); stages != want {
				t.Errorf("%d stages compared, want %d", stages, want)
			}
		})
	}
}
