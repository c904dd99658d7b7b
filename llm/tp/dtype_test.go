package tp

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
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/llm/safetensors"
)

// writeCheckpoint writes an untied Qwen3 checkpoint with random weights
// in dtype: 4 query heads over 1 KV head (multi-query attention, so every
// rank at TP=2 and TP=4 holds a replica of the one KV head), head_dim 12,
// hidden 32, intermediate 48, vocabulary 52.
func writeCheckpoint(t *testing.T, dtype safetensors.DType) string {
	t.Helper()
	const H, D, I, V, heads, kv = 32, 12, 48, 52, 4, 1
	cfg := map[string]any{"model_type": "qwen3", "vocab_size": V, "hidden_size": H, "intermediate_size": I,
		"num_hidden_layers": 2, "num_attention_heads": heads, "num_key_value_heads": kv, "head_dim": D,
		"rope_theta": 10000.0, "rms_norm_eps": 1e-5, "tie_word_embeddings": false, "max_position_embeddings": 64}
	rng := rand.New(rand.NewPCG(uint64(dtype.Size()), 11))
	entries := map[string]safetensors.Entry{}
	add := func(name string, norm bool, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		var b []byte
		for range n {
			v := float32(0.3 * rng.NormFloat64())
			if norm {
				v = 1 + v/3
			}
			if dtype == safetensors.F16 {
				b = binary.LittleEndian.AppendUint16(b, uint16(gpu.ToHalf(v)))
			} else {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
		}
		entries[name] = safetensors.Entry{DType: dtype, Shape: shape, Data: b}
	}
	add("model.embed_tokens.weight", false, V, H)
	add("lm_head.weight", false, V, H)
	add("model.norm.weight", true, H)
	for l := range 2 {
		p := fmt.Sprintf("model.layers.%d.", l)
		add(p+"input_layernorm.weight", true, H)
		add(p+"post_attention_layernorm.weight", true, H)
		add(p+"self_attn.q_norm.weight", true, D)
		add(p+"self_attn.k_norm.weight", true, D)
		add(p+"self_attn.q_proj.weight", false, heads*D, H)
		add(p+"self_attn.k_proj.weight", false, kv*D, H)
		add(p+"self_attn.v_proj.weight", false, kv*D, H)
		add(p+"self_attn.o_proj.weight", false, H, heads*D)
		add(p+"mlp.gate_proj.weight", false, I, H)
		add(p+"mlp.up_proj.weight", false, I, H)
		add(p+"mlp.down_proj.weight", false, H, I)
	}
	img, err := safetensors.Encode(entries)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := json.Marshal(cfg)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), c, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTPOtherDTypesAndOneKVHead: f32 and f16 checkpoints (the fixtures
// are bf16) with a single KV head, at TP=2 and TP=4 in native mode, give
// TP=1's logits for a prompt and two greedy steps.
func TestTPOtherDTypesAndOneKVHead(t *testing.T) {
	prompt := []int32{5, 9, 40, 2, 17}
	for _, dt := range []safetensors.DType{safetensors.F32, safetensors.F16} {
		dir := writeCheckpoint(t, dt)
		one, err := qwen3.Load(kern.OpenNative(), dir, qwen3.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantPrompt, wantSteps, wantTokens := run(t, func(c int) (forwarder, func(), error) {
			cache, err := one.NewCache(c)
			return func(tokens []int32, all bool) (*kern.Buffer[float32], error) { return one.Forward(cache, tokens, all) },
				cache.Free, err
		}, prompt, 2)
		one.Free()
		for _, T := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/TP=%d", dt, T), func(t *testing.T) {
				devs := make([]*kern.Device, T)
				for i := range devs {
					devs[i] = kern.OpenNative()
				}
				m, err := LoadLocal(devs, dir)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Free()
				if kv := m.Shards[0].Config.NumKeyValueHeads; kv != 1 {
					t.Fatalf("a rank has %d KV heads, want the 1 replicated", kv)
				}
				gotPrompt, gotSteps, gotTokens := run(t, func(c int) (forwarder, func(), error) {
					cache, err := m.NewCache(c)
					return func(tokens []int32, all bool) (*kern.Buffer[float32], error) { return m.Forward(cache, tokens, all) },
						cache.Free, err
				}, prompt, 2)
				checkRow(t, "prompt", gotPrompt, wantPrompt)
				for s := range gotSteps {
					checkRow(t, fmt.Sprintf("step %d", s), gotSteps[s], wantSteps[s])
				}
				if fmt.Sprint(gotTokens) != fmt.Sprint(wantTokens) {
					t.Errorf("tokens %v, want %v", gotTokens, wantTokens)
				}
			})
		}
	}
}
