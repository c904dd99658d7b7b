package qwen3

// Tensor-parallel shards: one rank's slice of the model (Megatron-LM's
// layout; package llm/tp runs the ranks and documents the split). A shard
// is an ordinary Model whose Config is the rank's share (heads, KV heads
// and intermediate size divided by the degree) and which meets the other
// ranks through a Collective at three points: after o_proj and after
// down_proj (all-reduce: each rank holds a partial sum of the layer's
// output) and after lm_head (all-gather: each rank holds a slice of the
// vocabulary). Everything else in forward.go runs unchanged on the
// rank's slice.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/llm/safetensors"
)

// Collective is what a shard needs from its communicator; tp.Comm has it.
// Both calls are collective: every rank makes them, in the same order,
// with buffers of the same length.
type Collective interface {
	Rank() int
	Size() int
	AllReduceSumF32(q kern.Queue, b *kern.Buffer[float32]) error
	AllGatherF32(q kern.Queue, out, in *kern.Buffer[float32]) error
}

// ShardConfig returns one rank's share of c under tensor parallelism of
// degree t: heads and intermediate size divided by t, and KV heads
// divided by t, or, when there are fewer KV heads than ranks, one per
// rank, each replicated on t/kv_heads ranks (vLLM's rule: a rank's query
// heads all read one KV head, so the group they belong to must be
// whole). Hidden size, head_dim and vocab_size are kept. It fails,
// naming the config.json field, when heads, intermediate size or
// vocab_size (the LM head is split by vocabulary) do not divide by t, or
// KV heads neither divide by t nor divide t.
func ShardConfig(c *Config, t int) (*Config, error) {
	if t < 1 {
		return nil, fmt.Errorf("qwen3: tensor parallelism of degree %d", t)
	}
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{
		{"num_attention_heads", c.NumAttentionHeads},
		{"intermediate_size", c.IntermediateSize},
		{"vocab_size", c.VocabSize},
	} {
		if f.v%t != 0 {
			errs = append(errs, fmt.Errorf("qwen3: tensor parallelism %d: config.json's %s = %d does not divide by %d", t, f.name, f.v, t))
		}
	}
	if kv := c.NumKeyValueHeads; kv%t != 0 && (kv > t || t%kv != 0) {
		errs = append(errs, fmt.Errorf("qwen3: tensor parallelism %d: config.json's num_key_value_heads = %d neither divides by %d nor divides it", t, kv, t))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s := *c
	s.NumAttentionHeads /= t
	s.NumKeyValueHeads = max(1, c.NumKeyValueHeads/t)
	s.IntermediateSize /= t
	return &s, nil
}

// firstKVHead is the first of rank r's KV heads: its block of
// kv_heads/t, or with fewer KV heads than ranks the one its query heads
// read (query head h reads h/(heads/kv_heads); rank r's first query head
// is r·heads/t).
func firstKVHead(c *Config, t, r int) int {
	if c.NumKeyValueHeads >= t {
		return r * c.NumKeyValueHeads / t
	}
	return r * c.NumAttentionHeads / t / (c.NumAttentionHeads / c.NumKeyValueHeads)
}

// LoadShard loads rank comm.Rank()'s slice of the model in dir onto dev,
// reading only the checkpoint (every rank reads the files itself; they
// are mmap'd). The Model's Config is the rank's share (ShardConfig);
// Forward on it is collective: every rank of comm must run the same
// Forward at the same time, and each gets the full logits.
func LoadShard(dev *kern.Device, dir string, comm Collective, opt LoadOptions) (*Model, error) {
	full, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	t, rank := comm.Size(), comm.Rank()
	cfg, err := ShardConfig(full, t)
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
	m := &Model{Config: cfg, Gen: gen, Matmul: DefaultMatmul(dev), dev: dev, tp: &shard{comm: comm}}
	l := &shardLoader{loader: &loader{dev: dev, set: set, progress: opt.Progress, total: set.Bytes()}, rank: rank, size: t, full: full, counted: map[string]bool{}}
	if err := m.load(l); err == nil && cfg.TieWordEmbeddings {
		// load made the LM head the (replicated) embedding; the shard's
		// head is its vocabulary slice of it.
		m.lmHead, err = l.block("model.embed_tokens.weight", cfg.VocabSize, cfg.HiddenSize, rank*cfg.VocabSize/t, cfg.VocabSize/t, 0, cfg.HiddenSize)
	}
	if err != nil {
		m.Free()
		return nil, fmt.Errorf("qwen3: rank %d of %d: %w", rank, t, err)
	}
	return m, nil
}

// Rank and Ranks are the shard's place in its clique (0 and 1 for a
// whole model).
func (m *Model) Rank() int {
	if m.tp == nil {
		return 0
	}
	return m.tp.comm.Rank()
}

// Ranks: see Rank.
func (m *Model) Ranks() int {
	if m.tp == nil {
		return 1
	}
	return m.tp.comm.Size()
}

// shardLoader slices each tensor as it is loaded. Layer weights are asked
// for at the rank's shape (m.load reads the shard's Config); lm_head at
// the full vocabulary, which the loader splits.
type shardLoader struct {
	*loader
	rank, size int
	full       *Config
	counted    map[string]bool // tensors Progress has counted (a tied head reads the embedding twice)
}

func (l *shardLoader) matrix(name string, out, in int) (*Weight, error) {
	r, t := l.rank, l.size
	switch {
	case hasSuffix(name, "k_proj.weight", "v_proj.weight"):
		// column-parallel by KV head, replicated when there are fewer
		// KV heads than ranks
		d := l.full.HeadDim
		return l.block(name, l.full.NumKeyValueHeads*d, in, firstKVHead(l.full, t, r)*d, out, 0, in)
	case hasSuffix(name, "q_proj.weight", "gate_proj.weight", "up_proj.weight"):
		// column-parallel: this rank's block of output rows
		return l.block(name, out*t, in, r*out, out, 0, in)
	case hasSuffix(name, "o_proj.weight", "down_proj.weight"):
		// row-parallel: the input columns of this rank's heads / MLP slice
		return l.block(name, out, in*t, 0, out, r*in, in)
	case name == "lm_head.weight":
		return l.block(name, out, in, r*out/t, out/t, 0, in)
	}
	l.counted[name] = true
	return l.loader.matrix(name, out, in) // embedding: replicated
}

func hasSuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// block uploads rows [r0, r0+nr) × columns [c0, c0+nc) of the [out, in]
// tensor name, in its own type.
func (l *shardLoader) block(name string, out, in, r0, nr, c0, nc int) (*Weight, error) {
	t, err := l.tensor(name, out, in)
	if err != nil {
		return nil, err
	}
	w := &Weight{Name: name, Out: nr, In: nc, DType: t.DType}
	switch t.DType {
	case safetensors.BF16:
		var xs []gpu.BFloat16
		if xs, err = t.BFloat16(); err == nil {
			w.bf16, err = kern.Upload(l.dev, subMatrix(xs, in, r0, nr, c0, nc))
		}
	case safetensors.F16:
		var xs []gpu.Half
		if xs, err = t.Half(); err == nil {
			w.f16, err = kern.Upload(l.dev, subMatrix(xs, in, r0, nr, c0, nc))
		}
	default:
		var xs []float32
		if xs, err = t.Float32(); err == nil {
			w.f32, err = kern.Upload(l.dev, subMatrix(xs, in, r0, nr, c0, nc))
		}
		w.DType = safetensors.F32
	}
	if err != nil {
		return nil, fmt.Errorf("qwen3: uploading rows %d:%d, columns %d:%d of %s: %w", r0, r0+nr, c0, c0+nc, name, err)
	}
	if !l.counted[name] {
		l.counted[name] = true
		l.advance(t)
	}
	return w, nil
}

// subMatrix copies a block out of a row-major matrix with in columns.
func subMatrix[T any](xs []T, in, r0, nr, c0, nc int) []T {
	out := make([]T, 0, nr*nc)
	for r := r0; r < r0+nr; r++ {
		out = append(out, xs[r*in+c0:r*in+c0+nc]...)
	}
	return out
}

// shard is a Model's tensor-parallel state: its communicator and the
// LM head's scratch, by row count.
type shard struct {
	comm Collective
	bufs map[int]*headBufs
}

// headBufs hold one row count's vocab-parallel logits: this rank's slice
// [rows, V/T], every rank's after the all-gather [T, rows, V/T], and the
// row order that interleaves them into [rows, V].
type headBufs struct {
	local, gathered *kern.Buffer[float32]
	order           *kern.Buffer[int32]
}

func (s *shard) free() {
	for _, b := range s.bufs {
		for _, x := range []*kern.Buffer[float32]{b.local, b.gathered} {
			if x != nil {
				x.Free()
			}
		}
		if b.order != nil {
			b.order.Free()
		}
	}
	s.bufs = nil
}

// allReduce sums a row-parallel projection's partial outputs across the
// ranks, in place; nothing to do for a whole model.
func (m *Model) allReduce(b *kern.Buffer[float32]) error {
	if m.tp == nil {
		return nil
	}
	return m.tp.comm.AllReduceSumF32(m.dev, b)
}

// lmHead computes out = x·lm_headᵀ for rows rows: directly for a whole
// model; for a shard, its vocabulary slice, all-gathered and reordered.
func (m *Model) lmHeadT(out, x *kern.Buffer[float32], rows int) error {
	if m.tp == nil {
		return m.Matmul.MatmulT(m.dev, out, x, m.lmHead, rows)
	}
	b, err := m.tp.head(m.dev, rows, m.lmHead.Out)
	if err != nil {
		return err
	}
	if err := m.Matmul.MatmulT(m.dev, b.local, x, m.lmHead, rows); err != nil {
		return err
	}
	if err := m.tp.comm.AllGatherF32(m.dev, b.gathered, b.local); err != nil {
		return fmt.Errorf("lm_head all-gather: %w", err)
	}
	// gathered is [T][rows][V/T]; as rows of V/T it is row r·rows+i for
	// rank r's slice of row i, and out's rows of V/T run i·T+r.
	return gatherRowsKernel.Launch(m.dev, kern.Cover(out.Len()), out, b.gathered, b.order, m.lmHead.Out)
}

func (s *shard) head(dev *kern.Device, rows, vt int) (*headBufs, error) {
	if b := s.bufs[rows]; b != nil {
		return b, nil
	}
	if len(s.bufs) >= maxWorkspaces {
		s.free()
	}
	t := s.comm.Size()
	order := make([]int32, rows*t)
	for i := range rows {
		for r := range t {
			order[i*t+r] = int32(r*rows + i)
		}
	}
	b := &headBufs{}
	var errs []error
	var err error
	b.local, err = kern.Alloc[float32](dev, rows*vt)
	errs = append(errs, err)
	b.gathered, err = kern.Alloc[float32](dev, t*rows*vt)
	errs = append(errs, err)
	b.order, err = kern.Upload(dev, order)
	errs = append(errs, err)
	if s.bufs == nil {
		s.bufs = map[int]*headBufs{}
	}
	s.bufs[rows] = b // so free releases a partial set
	if err := errors.Join(errs...); err != nil {
		s.free()
		return nil, fmt.Errorf("qwen3: lm_head buffers for %d rows: %w", rows, err)
	}
	return b, nil
}
