package qwen3

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/internal/ptxas"
)

// modelCopy copies a tiny model's config and weights into a temporary
// directory, with edit applied to config.json's fields.
func modelCopy(t *testing.T, variant string, edit func(map[string]any)) string {
	t.Helper()
	src := fixture.Model(t, variant)
	dst := t.TempDir()
	for _, f := range []string{"config.json", "generation_config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "config.json" && edit != nil {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			edit(m)
			if b, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestLoadErrors(t *testing.T) {
	dev := testDevices[1].dev
	cases := []struct {
		name    string
		variant string
		edit    func(map[string]any)
		want    []string
	}{
		{"shape", "tiny-qwen3-tied", func(m map[string]any) { m["intermediate_size"] = 96 },
			[]string{"model.safetensors", `"model.layers.0.mlp.gate_proj.weight"`, "[128 64]", "[96 64]"}},
		{"head_dim", "tiny-qwen3-hd32", func(m map[string]any) { delete(m, "head_dim") },
			[]string{`"model.layers.0.self_attn.q_norm.weight"`, "[32]", "[16]"}},
		{"untied without lm_head", "tiny-qwen3-tied", func(m map[string]any) { m["tie_word_embeddings"] = false },
			[]string{"lm_head.weight"}},
		{"model_type", "tiny-qwen3-tied", func(m map[string]any) { m["model_type"] = "mistral" },
			[]string{"config.json", "mistral"}},
		{"gqa", "tiny-qwen3-tied", func(m map[string]any) { m["num_key_value_heads"] = 3 },
			[]string{"num_key_value_heads = 3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := modelCopy(t, c.variant, c.edit)
			m, err := Load(dev, dir, LoadOptions{})
			if err == nil {
				m.Free()
				t.Fatal("Load succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	t.Run("truncated", func(t *testing.T) {
		dir := modelCopy(t, "tiny-qwen3-tied", nil)
		p := filepath.Join(dir, "model.safetensors")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, b[:len(b)-100], 0o644)
		_, err := Load(dev, dir, LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), p) {
			t.Errorf("truncated weights: %v", err)
		}
	})
}

func TestConfig(t *testing.T) {
	c, err := LoadConfig(fixture.Model(t, "tiny-qwen3-hd32"))
	if err != nil {
		t.Fatal(err)
	}
	if c.HeadDim != 32 || c.QDim() != 128 || c.KVDim() != 64 || c.RopeTheta != 1e6 || !c.TieWordEmbeddings || len(c.EOSTokenID) != 1 || c.EOSTokenID[0] != 999 {
		t.Errorf("config: %+v", c)
	}
	// rope_theta only under rope_parameters (transformers 5), eos as a list.
	dir := modelCopy(t, "tiny-qwen3-hd32", func(m map[string]any) {
		delete(m, "rope_theta")
		m["rope_parameters"] = map[string]any{"rope_theta": 5e5, "rope_type": "default"}
		m["eos_token_id"] = []int{7, 9}
	})
	c, err = LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.RopeTheta != 5e5 || len(c.EOSTokenID) != 2 {
		t.Errorf("rope_theta %g eos %v", c.RopeTheta, c.EOSTokenID)
	}
	g, err := LoadGenerationConfig(dir)
	if err != nil || len(g.EOSTokenID) != 1 {
		t.Errorf("generation config: %+v %v", g, err)
	}
}

// TestPTXAssembles assembles the engine's kernels for sm_80 and sm_90
// without spills.
func TestPTXAssembles(t *testing.T) {
	ptxas.CheckModule(t, "qwen3", kernModule.PTX)
}

// TestRandomModel: a random model of the tiny preset runs, and its weight
// bytes add up from the shapes.
func TestRandomModel(t *testing.T) {
	m, err := NewRandom(testDevices[0].dev, Presets["tiny"], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	c := m.Config
	per := c.QDim()*c.HiddenSize*2 + c.KVDim()*c.HiddenSize*2 + 3*c.IntermediateSize*c.HiddenSize
	want := 2 * int64(c.VocabSize*c.HiddenSize+c.NumHiddenLayers*per)
	if got := m.WeightBytes(); got != want {
		t.Errorf("WeightBytes = %d, want %d", got, want)
	}
	cache, err := m.NewCache(16)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Free()
	out, err := m.Forward(cache, []int32{1, 2, 3}, false)
	if err != nil {
		t.Fatal(err)
	}
	xs, _ := out.Download()
	for _, x := range xs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("non-finite logit %g", x)
		}
	}
	if _, err := NewRandom(testDevices[0].dev, Config{ModelType: "qwen3"}, 1); err == nil {
		t.Error("NewRandom of an empty config: no error")
	}
}
