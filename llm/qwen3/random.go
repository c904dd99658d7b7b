package qwen3

// Random weights at a config's shapes: for measuring speed at the shapes
// of a real model (Qwen3-0.6B, Qwen3-4B) when its weights are not at
// hand. The values mean nothing; only shapes, dtypes and bytes are real.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/llm/safetensors"
)

// Presets are configs of real Qwen3 models (from their config.json), for
// NewRandom.
var Presets = map[string]Config{
	"qwen3-0.6b": {ModelType: "qwen3", VocabSize: 151936, HiddenSize: 1024, IntermediateSize: 3072, NumHiddenLayers: 28,
		NumAttentionHeads: 16, NumKeyValueHeads: 8, HeadDim: 128, MaxPositionEmbeddings: 40960, RMSNormEps: 1e-6,
		RopeTheta: 1e6, TieWordEmbeddings: true, EOSTokenID: IDs{151645}},
	"qwen3-4b": {ModelType: "qwen3", VocabSize: 151936, HiddenSize: 2560, IntermediateSize: 9728, NumHiddenLayers: 36,
		NumAttentionHeads: 32, NumKeyValueHeads: 8, HeadDim: 128, MaxPositionEmbeddings: 40960, RMSNormEps: 1e-6,
		RopeTheta: 1e6, TieWordEmbeddings: true, EOSTokenID: IDs{151645}},
	// The shape of ../shared/qwen3-ref's tiny-qwen3-hd32, for tests.
	"tiny": {ModelType: "qwen3", VocabSize: 1000, HiddenSize: 64, IntermediateSize: 128, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 32, MaxPositionEmbeddings: 128, RMSNormEps: 1e-6,
		RopeTheta: 1e6, TieWordEmbeddings: true, EOSTokenID: IDs{999}},
}

// NewRandom makes a model of cfg's shape with seeded random bf16 weights
// (uniform, standard deviation 0.02 like transformers' initializer; norm
// scales 1).
func NewRandom(dev *kern.Device, cfg Config, seed uint64) (*Model, error) {
	c := cfg
	if err := c.normalize(); err != nil {
		return nil, fmt.Errorf("qwen3: random model: %w", err)
	}
	m := &Model{Config: &c, Gen: &GenerationConfig{}, Matmul: DefaultMatmul(dev), dev: dev}
	r := &randomSource{dev: dev, seed: seed, tied: c.TieWordEmbeddings}
	if err := m.load(r); err != nil {
		m.Free()
		return nil, err
	}
	return m, nil
}

type randomSource struct {
	dev      *kern.Device
	seed     uint64
	matrices uint64 // matrices drawn so far: each gets its own streams
	tied     bool
}

// randomChunk is how many values one PCG stream draws. Chunks are filled
// in parallel (Qwen3-4B's 4·10⁹ values take over a minute on one core), and
// each chunk's stream is named by the matrix and chunk index, so the
// values do not depend on how many cores filled them.
const randomChunk = 1 << 20

func (r *randomSource) has(name string) bool { return name != "lm_head.weight" || !r.tied }
func (r *randomSource) where() string        { return "random weights" }

func (r *randomSource) matrix(name string, out, in int) (*Weight, error) {
	xs := make([]gpu.BFloat16, out*in)
	a := 0.02 * math.Sqrt(3) // uniform on [-a, a] has standard deviation 0.02
	id := r.matrices
	r.matrices++
	chunks := (len(xs) + randomChunk - 1) / randomChunk
	next := make(chan int, chunks)
	for c := range chunks {
		next <- c
	}
	close(next)
	var wg sync.WaitGroup
	for range min(chunks, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for c := range next {
				rng := rand.New(rand.NewPCG(r.seed, id<<32|uint64(c)))
				for i := c * randomChunk; i < min(len(xs), (c+1)*randomChunk); i++ {
					xs[i] = gpu.ToBFloat16(float32((2*rng.Float64() - 1) * a))
				}
			}
		})
	}
	wg.Wait()
	b, err := kern.Upload(r.dev, xs)
	if err != nil {
		return nil, fmt.Errorf("qwen3: uploading random %s: %w", name, err)
	}
	return &Weight{Name: name, Out: out, In: in, DType: safetensors.BF16, bf16: b}, nil
}

func (r *randomSource) vector(name string, n int) (*kern.Buffer[float32], error) {
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = 1
	}
	b, err := kern.Upload(r.dev, xs)
	if err != nil {
		return nil, fmt.Errorf("qwen3: uploading %s: %w", name, err)
	}
	return b, nil
}

// WeightBytes is the size of the model's weights on the device: what a
// decode step must read at least once.
func (m *Model) WeightBytes() int64 {
	var n int64
	for _, w := range []*Weight{m.embed} {
		n += w.Bytes()
	}
	if m.lmHead != m.embed {
		n += m.lmHead.Bytes()
	}
	for _, y := range m.layers {
		for _, w := range []*Weight{y.q, y.k, y.v, y.o, y.gate, y.up, y.down} {
			if w != nil { // up is nil on the ops path (in gate)
				n += w.Bytes()
			}
		}
	}
	return n
}

// KVBytesPerPosition is the KV cache's bytes per position, all layers:
// float32 on the float32 path, the weights' 16-bit type with the head
// padded to 64 or 128 on the ops path.
func (m *Model) KVBytesPerPosition() int64 {
	c := m.Config
	if m.ops != nil {
		return int64(c.NumHiddenLayers) * 2 * int64(c.NumKeyValueHeads*m.ops.hd) * 2
	}
	return int64(c.NumHiddenLayers) * 2 * int64(c.KVDim()) * 4
}
