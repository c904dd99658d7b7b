package qwen3

// A float64 Qwen3 forward pass on the host: ref_numpy.py (in
// ../shared/qwen3-ref) in Go. It is checked against the Hugging Face
// reference logits, and then gives the per-layer tensors the engine is
// compared with, so that a failure names the layer and the stage.

import (
	"fmt"
	"math"
	"testing"

	"github.com/gokern/kern/llm/safetensors"
)

type refModel struct {
	c      *Config
	w      map[string][]float64
	k, v   [][]float64 // per layer, [pos, kvDim]
	pos    int
	stages map[string][]float64 // "layer/stage" of the last forward
	// round16, if set, rounds to the ops path's 16-bit type where it
	// does (ops_test.go): every projection's input, and q, k, v and the
	// attention output.
	round16 func([]float64) []float64
}

// r16 applies round16 if set.
func (r *refModel) r16(x []float64) []float64 {
	if r.round16 == nil {
		return x
	}
	return r.round16(x)
}

func loadRef(t *testing.T, dir string) *refModel {
	t.Helper()
	c, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	r := &refModel{c: c, w: map[string][]float64{}}
	for _, n := range set.Names() {
		tn, _ := set.Tensor(n)
		xs, err := tn.Float32()
		if err != nil {
			t.Fatal(err)
		}
		r.w[n] = f64(xs)
	}
	if c.TieWordEmbeddings {
		r.w["lm_head.weight"] = r.w["model.embed_tokens.weight"]
	}
	r.k = make([][]float64, c.NumHiddenLayers)
	r.v = make([][]float64, c.NumHiddenLayers)
	return r
}

func f64(xs []float32) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// rmsnorm normalizes each row of n elements of x.
func rmsnorm(x, w []float64, n int, eps float64) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < len(x)/n; r++ {
		ss := 0.0
		for _, v := range x[r*n : (r+1)*n] {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(n)+eps)
		for j := 0; j < n; j++ {
			out[r*n+j] = x[r*n+j] * s * w[j]
		}
	}
	return out
}

// linear is x [T, in] · wᵀ, w [out, in].
func linear(x, w []float64, in int) []float64 {
	T, out := len(x)/in, len(w)/in
	y := make([]float64, T*out)
	for t := 0; t < T; t++ {
		for o := 0; o < out; o++ {
			s := 0.0
			for j := 0; j < in; j++ {
				s += x[t*in+j] * w[o*in+j]
			}
			y[t*out+o] = s
		}
	}
	return y
}

// rope rotates x [T, heads, D] in place (rotate-half layout).
func rope(x []float64, pos0, heads, D int, theta float64) {
	half := D / 2
	for i := 0; i < len(x)/D; i++ {
		p := float64(pos0 + i/heads)
		v := x[i*D : (i+1)*D]
		for j := 0; j < half; j++ {
			a := p * math.Pow(theta, -2*float64(j)/float64(D))
			s, c := math.Sincos(a)
			x1, x2 := v[j], v[j+half]
			v[j], v[j+half] = x1*c-x2*s, x2*c+x1*s
		}
	}
}

func (r *refModel) record(layer int, stage string, x []float64) {
	r.stages[fmt.Sprintf("%d/%s", layer, stage)] = append([]float64(nil), x...)
}

// forward returns the logits [T, vocab] and records every stage.
func (r *refModel) forward(ids []int32) []float64 {
	c, w := r.c, r.w
	H, D, nh, nkv := c.HiddenSize, c.HeadDim, c.NumAttentionHeads, c.NumKeyValueHeads
	eps, T := c.RMSNormEps, len(ids)
	r.stages = map[string][]float64{}
	x := make([]float64, T*H)
	emb := w["model.embed_tokens.weight"]
	for t, id := range ids {
		copy(x[t*H:], emb[int(id)*H:(int(id)+1)*H])
	}
	r.record(-1, "embed", x)
	for l := 0; l < c.NumHiddenLayers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		h := rmsnorm(x, w[p+"input_layernorm.weight"], H, eps)
		r.record(l, "attn_norm", h)
		h = r.r16(h)
		q := linear(h, w[p+"self_attn.q_proj.weight"], H)
		k := linear(h, w[p+"self_attn.k_proj.weight"], H)
		if !c.NoQKNorm {
			q = rmsnorm(q, w[p+"self_attn.q_norm.weight"], D, eps)
			k = rmsnorm(k, w[p+"self_attn.k_norm.weight"], D, eps)
		}
		v := linear(h, w[p+"self_attn.v_proj.weight"], H)
		rope(q, r.pos, nh, D, c.RopeTheta)
		rope(k, r.pos, nkv, D, c.RopeTheta)
		r.record(l, "q", q)
		r.record(l, "k", k)
		r.record(l, "v", v)
		q, k, v = r.r16(q), r.r16(k), r.r16(v)
		r.k[l] = append(r.k[l], k...)
		r.v[l] = append(r.v[l], v...)
		kvd := nkv * D
		a := make([]float64, T*nh*D)
		for t := 0; t < T; t++ {
			n := r.pos + t + 1
			for hd := 0; hd < nh; hd++ {
				kh := hd / (nh / nkv)
				qv := q[(t*nh+hd)*D : (t*nh+hd+1)*D]
				s := make([]float64, n)
				m := math.Inf(-1)
				for j := 0; j < n; j++ {
					kv := r.k[l][j*kvd+kh*D : j*kvd+(kh+1)*D]
					for d := range qv {
						s[j] += qv[d] * kv[d]
					}
					s[j] /= math.Sqrt(float64(D))
					m = math.Max(m, s[j])
				}
				z := 0.0
				for j := range s {
					s[j] = math.Exp(s[j] - m)
					z += s[j]
				}
				out := a[(t*nh+hd)*D : (t*nh+hd+1)*D]
				for j := 0; j < n; j++ {
					vv := r.v[l][j*kvd+kh*D : j*kvd+(kh+1)*D]
					for d := range out {
						out[d] += s[j] / z * vv[d]
					}
				}
			}
		}
		a = r.r16(a)
		r.record(l, "attn", a)
		o := linear(a, w[p+"self_attn.o_proj.weight"], nh*D)
		for i := range x {
			x[i] += o[i]
		}
		r.record(l, "attn_res", x)
		h = rmsnorm(x, w[p+"post_attention_layernorm.weight"], H, eps)
		r.record(l, "mlp_norm", h)
		h = r.r16(h)
		g := linear(h, w[p+"mlp.gate_proj.weight"], H)
		u := linear(h, w[p+"mlp.up_proj.weight"], H)
		for i := range g {
			g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
		}
		g = r.r16(g)
		d := linear(g, w[p+"mlp.down_proj.weight"], c.IntermediateSize)
		r.record(l, "mlp", d)
		for i := range x {
			x[i] += d[i]
		}
		r.record(l, "out", x)
	}
	r.pos += T
	L := c.NumHiddenLayers
	hn := rmsnorm(x, w["model.norm.weight"], H, eps)
	r.record(L, "norm", hn)
	hn = r.r16(hn)
	logits := linear(hn, w["lm_head.weight"], H)
	r.record(L, "logits", logits)
	return logits
}

// hfReference is reference.safetensors: the logits transformers computed
// (fp32 compute over the bf16 weights) and its greedy tokens.
type hfReference struct {
	prompt, generated []int32
	prefill, decode   []float32 // [T, V], [S, V]
}

func loadHFReference(t *testing.T, dir string) *hfReference {
	t.Helper()
	f, err := safetensors.Open(dir + "/reference.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ints := func(name string) []int32 {
		xs, err := f.Tensor(name).Int64()
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int32, len(xs))
		for i, x := range xs {
			out[i] = int32(x)
		}
		return out
	}
	floats := func(name string) []float32 {
		xs, err := f.Tensor(name).Float32()
		if err != nil {
			t.Fatal(err)
		}
		return xs
	}
	return &hfReference{prompt: ints("prompt_ids"), generated: ints("generated_ids"),
		prefill: floats("prefill_logits"), decode: floats("decode_logits")}
}

// compareRows checks got against want row by row (rows of n): each
// element within rel·(|want| + rms(want row)). It returns a message for
// the worst row, or "" when all are within, and the share of the
// tolerance the worst element used.
func compareRows(got []float32, want []float64, n int, rel float64) (string, float64) {
	if len(got) != len(want) {
		return fmt.Sprintf("%d elements, want %d", len(got), len(want)), math.Inf(1)
	}
	worst, msg := 0.0, ""
	for r := 0; r < len(want)/n; r++ {
		row := want[r*n : (r+1)*n]
		ss := 0.0
		for _, v := range row {
			ss += v * v
		}
		rms := math.Sqrt(ss / float64(n))
		for j, v := range row {
			g := float64(got[r*n+j])
			share := math.Abs(g-v) / (rel * (math.Abs(v) + rms))
			if !(share <= worst) { // NaN counts as worst
				worst = share
				msg = fmt.Sprintf("row %d col %d: got %.7g, want %.7g (%.0f%% of the tolerance %.0e·(|want|+rms %.3g))", r, j, g, v, 100*share, rel, rms)
			}
		}
	}
	if worst <= 1 {
		return "", worst
	}
	return msg, worst
}

// argmax returns the index of row's largest element (lowest on ties).
func argmax[T float32 | float64](row []T) int32 {
	best := 0
	for j, v := range row {
		if v > row[best] {
			best = j
		}
	}
	return int32(best)
}

// TestReferenceMatchesHF checks the float64 reference itself against
// transformers' logits, so the per-layer comparison rests on something.
func TestReferenceMatchesHF(t *testing.T) {
	for _, variant := range testVariants(t) {
		t.Run(variant.name, func(t *testing.T) {
			hf := loadHFReference(t, variant.dir)
			r := loadRef(t, variant.dir)
			V := r.c.VocabSize
			logits := r.forward(hf.prompt)
			if msg, _ := compareRows(hf.prefill, logits, V, 1e-4); msg != "" {
				t.Errorf("prefill: reference vs HF: %s", msg)
			}
			for s := 0; s < len(hf.decode)/V; s++ {
				logits := r.forward(hf.generated[s : s+1])
				if msg, _ := compareRows(hf.decode[s*V:(s+1)*V], logits, V, 1e-4); msg != "" {
					t.Errorf("decode %d: reference vs HF: %s", s, msg)
				}
			}
		})
	}
}
