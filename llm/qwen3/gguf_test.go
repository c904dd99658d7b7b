package qwen3

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/gguf"
)

// Quantisers for the test's GGUF files, from the formats' definitions
// (ggml-common.h): per block of 32, Q8_0 stores d = max|x|/127 and
// round(x/d); Q4_1 stores d = (max-min)/15, m = min and round((x-m)/d).

func quantQ8_0(xs []float32) []byte {
	var out []byte
	for b := 0; b < len(xs); b += 32 {
		amax := 0.0
		for _, x := range xs[b : b+32] {
			amax = math.Max(amax, math.Abs(float64(x)))
		}
		d := float32(amax / 127)
		out = binary.LittleEndian.AppendUint16(out, uint16(gpu.ToHalf(d)))
		for _, x := range xs[b : b+32] {
			q := 0.0
			if d != 0 {
				q = math.Round(float64(x / d))
			}
			out = append(out, byte(int8(q)))
		}
	}
	return out
}

func quantQ4_1(xs []float32) []byte {
	var out []byte
	for b := 0; b < len(xs); b += 32 {
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, x := range xs[b : b+32] {
			lo, hi = min(lo, x), max(hi, x)
		}
		d := (hi - lo) / 15
		out = binary.LittleEndian.AppendUint16(out, uint16(gpu.ToHalf(d)))
		out = binary.LittleEndian.AppendUint16(out, uint16(gpu.ToHalf(lo)))
		q := func(x float32) byte {
			if d == 0 {
				return 0
			}
			return byte(min(15, max(0, math.Round(float64((x-lo)/d)))))
		}
		for j := 0; j < 16; j++ {
			out = append(out, q(xs[b+j])|q(xs[b+16+j])<<4)
		}
	}
	return out
}

func f16bytes(xs []float32) []byte {
	var out []byte
	for _, x := range xs {
		out = binary.LittleEndian.AppendUint16(out, uint16(gpu.ToHalf(x)))
	}
	return out
}

func f32bytes(xs []float32) []byte {
	var out []byte
	for _, x := range xs {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}

// permuteRoPE is llama.cpp's converter permutation (the inverse of
// unpermuteRoPE), written from its definition: view the rows of each
// head as [2, d/2] and transpose to [d/2, 2].
func permuteRoPE(w []float32, heads, d, in int) []float32 {
	out := make([]float32, len(w))
	for h := 0; h < heads; h++ {
		for j := 0; j < 2; j++ {
			for i := 0; i < d/2; i++ {
				src := (h*d + j*d/2 + i) * in
				dst := (h*d + 2*i + j) * in
				copy(out[dst:dst+in], w[src:src+in])
			}
		}
	}
	return out
}

// tinyLlamaGGUF writes the untied tiny model's weights as a Llama GGUF
// (q/k permuted as llama.cpp does, matrices in Q4_1, Q8_0 and F16) and
// returns its path and a float64 reference over the values the file
// encodes, in Hugging Face layout, with QK-norm off.
func tinyLlamaGGUF(t *testing.T) (string, *refModel) {
	t.Helper()
	dir := fixture.Model(t, "tiny-qwen3-untied")
	ref := loadRef(t, dir)
	c := ref.c
	c.NoQKNorm = true
	meta := []gguf.KV{
		{Key: "general.architecture", Value: "llama"},
		{Key: "llama.block_count", Value: uint32(c.NumHiddenLayers)},
		{Key: "llama.context_length", Value: uint32(c.MaxPositionEmbeddings)},
		{Key: "llama.embedding_length", Value: uint32(c.HiddenSize)},
		{Key: "llama.feed_forward_length", Value: uint32(c.IntermediateSize)},
		{Key: "llama.attention.head_count", Value: uint32(c.NumAttentionHeads)},
		{Key: "llama.attention.head_count_kv", Value: uint32(c.NumKeyValueHeads)},
		{Key: "llama.attention.key_length", Value: uint32(c.HeadDim)},
		{Key: "llama.rope.freq_base", Value: float32(c.RopeTheta)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: float32(c.RMSNormEps)},
		{Key: "tokenizer.ggml.eos_token_id", Value: uint32(c.EOSTokenID[0])},
	}
	var tensors []gguf.TensorData
	add := func(hf string, ty gguf.Type, perm int) {
		gn, err := ggufName(hf)
		if err != nil {
			t.Fatal(err)
		}
		w64 := ref.w[hf]
		w := make([]float32, len(w64))
		for i, x := range w64 {
			w[i] = float32(x)
		}
		encode := map[gguf.Type]func([]float32) []byte{gguf.F32: f32bytes, gguf.F16: f16bytes, gguf.Q8_0: quantQ8_0, gguf.Q4_1: quantQ4_1}[ty]
		var dims []int
		switch {
		case strings.Contains(hf, "norm"):
			dims = []int{len(w)}
		case strings.Contains(hf, "down_proj"):
			dims = []int{c.IntermediateSize, c.HiddenSize}
		case strings.Contains(hf, "o_proj"):
			dims = []int{c.QDim(), c.HiddenSize}
		default:
			dims = []int{c.HiddenSize, len(w) / c.HiddenSize}
		}
		// The reference gets the values the file encodes: quantising
		// works on rows, so it commutes with the row permutation.
		img, err := gguf.Encode(nil, []gguf.TensorData{{Name: "x", Dims: dims, Type: ty, Data: encode(w)}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := gguf.Parse(hf, img)
		if err != nil {
			t.Fatal(err)
		}
		deq, err := g.Tensors[0].Float32()
		if err != nil {
			t.Fatal(err)
		}
		ref.w[hf] = f64(deq)
		if perm > 0 {
			w = permuteRoPE(w, perm, c.HeadDim, c.HiddenSize)
		}
		tensors = append(tensors, gguf.TensorData{Name: gn, Dims: dims, Type: ty, Data: encode(w)})
	}
	add("model.embed_tokens.weight", gguf.Q8_0, 0)
	add("model.norm.weight", gguf.F32, 0)
	add("lm_head.weight", gguf.F16, 0)
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		add(p+"input_layernorm.weight", gguf.F32, 0)
		add(p+"post_attention_layernorm.weight", gguf.F32, 0)
		add(p+"self_attn.q_proj.weight", gguf.Q4_1, c.NumAttentionHeads)
		add(p+"self_attn.k_proj.weight", gguf.Q4_1, c.NumKeyValueHeads)
		add(p+"self_attn.v_proj.weight", gguf.Q8_0, 0)
		add(p+"self_attn.o_proj.weight", gguf.Q4_1, 0)
		add(p+"mlp.gate_proj.weight", gguf.Q4_1, 0)
		add(p+"mlp.up_proj.weight", gguf.Q8_0, 0)
		add(p+"mlp.down_proj.weight", gguf.Q4_1, 0)
	}
	path := filepath.Join(t.TempDir(), "tiny-llama.gguf")
	if err := gguf.WriteFile(path, meta, tensors); err != nil {
		t.Fatal(err)
	}
	return path, ref
}

// TestLlamaGGUF loads a tiny quantised Llama GGUF on every test device
// and checks prefill and greedy decode, stage by stage, against the
// float64 reference over the same dequantised weights.
func TestLlamaGGUF(t *testing.T) {
	path, _ := tinyLlamaGGUF(t)
	for _, d := range testDevices {
		t.Run(d.name, func(t *testing.T) {
			_, ref := tinyLlamaGGUF(t)
			g, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			m, err := LoadGGUF(d.dev, g, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Free()
			if !m.Config.NoQKNorm || m.Config.TieWordEmbeddings || m.Config.HeadDim != ref.c.HeadDim {
				t.Fatalf("config from GGUF: %+v", m.Config)
			}
			V := m.Config.VocabSize
			cache, err := m.NewCache(32)
			if err != nil {
				t.Fatal(err)
			}
			defer cache.Free()
			var failed []string
			m.Trace = func(stage string, layer int, x *kern.Buffer[float32], rows, cols int) error {
				got, err := x.Download()
				if err != nil {
					return err
				}
				if msg, _ := compareRows(got, ref.stages[fmt.Sprintf("%d/%s", layer, stage)], cols, stageRel); msg != "" {
					failed = append(failed, fmt.Sprintf("layer %d %s: %s", layer, stage, msg))
				}
				return nil
			}
			ids := []int32{3, 141, 592, 65, 35, 897, 9, 32}
			for step := 0; step < 4; step++ {
				want := ref.forward(ids)
				failed = nil
				out, err := m.Forward(cache, ids, true)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range failed {
					t.Errorf("step %d: %s", step, f)
				}
				got, err := out.Download()
				if err != nil {
					t.Fatal(err)
				}
				if msg, _ := compareRows(got, want, V, stageRel); msg != "" {
					t.Fatalf("step %d: logits: %s", step, msg)
				}
				next := argmax(got[len(got)-V:])
				if w := argmax(want[len(want)-V:]); next != w {
					t.Fatalf("step %d: greedy token %d, want %d", step, next, w)
				}
				ids = []int32{next}
			}
		})
	}
}

// Metadata the engine cannot run is refused with the file and the key.
func TestConfigFromGGUFErrors(t *testing.T) {
	base := []gguf.KV{
		{Key: "llama.block_count", Value: uint32(1)}, {Key: "llama.embedding_length", Value: uint32(32)},
		{Key: "llama.feed_forward_length", Value: uint32(32)}, {Key: "llama.attention.head_count", Value: uint32(2)},
	}
	emb := []gguf.TensorData{{Name: "token_embd.weight", Dims: []int{32, 4}, Type: gguf.F32, Data: make([]byte, 4*32*4)}}
	for _, c := range []struct {
		meta []gguf.KV
		want string
	}{
		{[]gguf.KV{{Key: "general.architecture", Value: "gpt2"}}, `general.architecture "gpt2"`},
		{[]gguf.KV{{Key: "general.architecture", Value: "llama"}, {Key: "llama.rope.dimension_count", Value: uint32(8)}}, "partial RoPE"},
		{[]gguf.KV{{Key: "general.architecture", Value: "llama"}, {Key: "llama.attention.head_count_kv", Value: uint32(3)}}, "not a multiple"},
		{[]gguf.KV{{Key: "general.architecture", Value: "llama"}, {Key: "llama.rope.scaling.type", Value: "yarn"}}, `rope scaling "yarn"`},
	} {
		img, err := gguf.Encode(append(c.meta, base...), emb, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := gguf.Parse("cfg.gguf", img)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ConfigFromGGUF(g)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "cfg.gguf") {
			t.Errorf("got %v, want an error naming cfg.gguf with %q", err, c.want)
		}
	}
}
