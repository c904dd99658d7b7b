package qwen3

// The forward pass over a batch: rows of tokens from one or more
// sequences sharing a KV pool. Every row-wise step (norms, projections,
// SwiGLU, residuals) treats the rows alike; RoPE, the cache writes and
// attention read each row's position and sequence from small int32
// tables built on the host. A row's result depends only on its own
// sequence (each matmul row and attention row is computed by the same
// code in the same order whatever else is in the batch), so a request
// batched with others produces exactly what it produces alone.

import (
	"errors"
	"fmt"
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/llm/safetensors"
	"github.com/gokern/kern/ops"
)

// wsKey is a batch's shape: rows, sequences and the longest page table.
type wsKey struct{ R, S, P int }

// workspace is the activations and tables of one batch shape, kept for
// the next step of the same shape (every decode step of a steady batch).
type workspace struct {
	wsKey
	// The step's int32 tables, views of one allocation (tables) that a
	// step fills from hostTables in one copy: on a GPU each copy was a
	// synchronous round trip to the device, and a decode step made nine.
	// A step replayed from its graph copies them inside the graph
	// (opsforward.go), with no round trip of its own. seqLens, cuQ and
	// cuK are the ops path's.
	ids, pos, slot, rowSeq, lastRow, table *kern.Buffer[int32]
	seqLens, cuQ, cuK                      *kern.Buffer[int32]
	tables                                 *kern.Buffer[int32]
	hostTables                             *kern.HostBuffer[int32] // page-locked on a GPU
	cand                                   *kern.Buffer[uint64]    // a decode step's candidates (candidates.go)
	candHost                               *kern.HostBuffer[uint64]
	toff                                   [10]int // each table's offset in tables, then the total
	emb16                                  *kern.Buffer[gpu.BFloat16]
	emb16h                                 *kern.Buffer[gpu.Half]
	x, x2, h, a, o                         *kern.Buffer[float32] // [R, hidden]; a [R, qdim]
	q, qr, k, kr, v                        *kern.Buffer[float32]
	gate, up, act                          *kern.Buffer[float32]
	hl, hn                                 *kern.Buffer[float32] // [S, hidden]
	logits, logitsLast                     *kern.Buffer[float32] // [R, vocab], [S, vocab]
	ob                                     any                   // the ops path's *opsBufs[T], made on first use
	graph                                  *kern.Graph           // the decode step's (graph.go)
	warm                                   bool                  // a decode step ran eagerly
}

func (w *workspace) free() {
	if w == nil {
		return
	}
	for _, b := range []*kern.Buffer[float32]{w.x, w.x2, w.h, w.a, w.o, w.q, w.qr, w.k, w.kr, w.v, w.gate, w.up, w.act, w.hl, w.hn, w.logits, w.logitsLast} {
		if b != nil {
			b.Free()
		}
	}
	if w.tables != nil {
		w.tables.Free() // and its views
	}
	if w.hostTables != nil {
		w.hostTables.Free()
	}
	if w.cand != nil {
		w.cand.Free()
		w.candHost.Free()
	}
	if w.emb16 != nil {
		w.emb16.Free()
	}
	if w.emb16h != nil {
		w.emb16h.Free()
	}
	if f, ok := w.ob.(interface{ free() }); ok {
		f.free()
	}
	if w.graph != nil {
		w.graph.Close()
	}
}

// maxWorkspaces bounds the shapes kept; a server's batch changes shape as
// requests come and go.
const maxWorkspaces = 8

func (m *Model) workspace(key wsKey, all bool) (*workspace, error) {
	if w, ok := m.ws[key]; ok && (!all || w.logits != nil) {
		return w, nil
	}
	if old := m.ws[key]; old != nil { // made without all-rows logits
		old.free()
		delete(m.ws, key)
	}
	if len(m.ws) >= maxWorkspaces {
		// Shapes without a decode graph go first (a server's prefills
		// come in every length); a captured graph is worth keeping.
		for k, w := range m.ws {
			if w.graph == nil {
				w.free()
				delete(m.ws, k)
			}
		}
	}
	if len(m.ws) >= maxWorkspaces {
		for k, w := range m.ws {
			w.free()
			delete(m.ws, k)
		}
	}
	if m.ws == nil {
		m.ws = map[wsKey]*workspace{}
	}
	c := m.Config
	R, S := key.R, key.S
	w := &workspace{wsKey: key}
	var errs []error
	f := func(n int) *kern.Buffer[float32] {
		b, err := kern.Alloc[float32](m.dev, n)
		errs = append(errs, err)
		return b
	}
	H := c.HiddenSize
	w.x, w.x2, w.h, w.o = f(R*H), f(R*H), f(R*H), f(R*H)
	w.a, w.q, w.qr = f(R*c.QDim()), f(R*c.QDim()), f(R*c.QDim())
	w.k, w.kr, w.v = f(R*c.KVDim()), f(R*c.KVDim()), f(R*c.KVDim())
	w.gate, w.up, w.act = f(R*c.IntermediateSize), f(R*c.IntermediateSize), f(R*c.IntermediateSize)
	w.hl, w.hn, w.logitsLast = f(S*H), f(S*H), f(S*c.VocabSize)
	if all {
		w.logits = f(R * c.VocabSize)
	}
	sizes := tableSizes(key)
	for i, n := range sizes {
		w.toff[i+1] = w.toff[i] + (n+tableAlign-1)/tableAlign*tableAlign
	}
	var err error
	if w.tables, err = kern.Alloc[int32](m.dev, w.toff[len(sizes)]); err == nil {
		w.hostTables, err = kern.AllocHost[int32](m.dev, w.tables.Len())
	}
	if err == nil {
		for i, v := range []**kern.Buffer[int32]{&w.ids, &w.pos, &w.slot, &w.rowSeq, &w.lastRow, &w.table, &w.seqLens, &w.cuQ, &w.cuK} {
			if *v, err = w.tables.Slice(w.toff[i], w.toff[i]+sizes[i]); err != nil {
				break
			}
		}
	}
	errs = append(errs, err)
	switch m.embed.DType {
	case safetensors.BF16:
		w.emb16, err = kern.Alloc[gpu.BFloat16](m.dev, R*H)
	case safetensors.F16:
		w.emb16h, err = kern.Alloc[gpu.Half](m.dev, R*H)
	}
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		w.free()
		return nil, fmt.Errorf("qwen3: workspace for %d rows: %w", R, err)
	}
	m.ws[key] = w
	return w, nil
}

// tableSizes are a step's int32 tables' lengths, in workspace order: ids,
// pos, slot, rowSeq, lastRow, table, seqLens, cuQ, cuK.
func tableSizes(k wsKey) [9]int {
	return [9]int{k.R, k.R, k.R, k.R, k.S, k.S * k.P, k.S, k.S + 1, k.S + 1}
}

// tableAlign is a table's alignment in tables, in int32s: 256 bytes, as
// every buffer a kernel takes (kern.Buffer.Slice).
const tableAlign = 64

// tableHost is table i's part of w.hostTables, cleared.
func (w *workspace) tableHost(i int) []int32 {
	h := w.hostTables.Data()[w.toff[i] : w.toff[i]+tableSizes(w.wsKey)[i]]
	clear(h)
	return h
}

// scratch returns the attention score buffer with room for n floats.
func (m *Model) scratch(n int) (*kern.Buffer[float32], error) {
	if m.scores != nil && m.scores.Len() >= n {
		return m.scores, nil
	}
	if m.scores != nil {
		n = max(n, 2*m.scores.Len())
		m.scores.Free()
		m.scores = nil
	}
	b, err := kern.Alloc[float32](m.dev, n)
	if err != nil {
		return nil, fmt.Errorf("qwen3: attention scratch of %d floats: %w", n, err)
	}
	m.scores = b
	return b, nil
}

// Forward runs tokens (positions c.Len … c.Len+len(tokens)-1) through the
// model, appends their keys and values to c, and returns the logits: of
// every token ([len(tokens), vocab]) if all, else of the last one
// ([vocab]). The returned buffer belongs to the model and is overwritten
// by the next Forward.
func (m *Model) Forward(c *Cache, tokens []int32, all bool) (*kern.Buffer[float32], error) {
	if c.Len+len(tokens) > c.Cap {
		return nil, fmt.Errorf("qwen3: %d tokens after %d cached exceed the cache's %d positions", len(tokens), c.Len, c.Cap)
	}
	return m.forward([]*Seq{c.Seq}, [][]int32{tokens}, all)
}

// ForwardBatch runs one step for several sequences of one pool: sequence
// i gets tokens[i] (its prompt, or the one token it decodes next) at its
// next positions, taking pages from the pool as needed. It returns the
// logits of each sequence's last token, [len(seqs), vocab]; the buffer
// belongs to the model until the next call.
func (m *Model) ForwardBatch(seqs []*Seq, tokens [][]int32) (*kern.Buffer[float32], error) {
	return m.forward(seqs, tokens, false)
}

func (m *Model) forward(seqs []*Seq, tokens [][]int32, all bool) (*kern.Buffer[float32], error) {
	if len(seqs) == 0 || len(seqs) != len(tokens) {
		return nil, fmt.Errorf("qwen3: forward of %d sequences with %d token lists", len(seqs), len(tokens))
	}
	if err := m.checkStep(seqs, tokens); err != nil {
		return nil, err
	}
	if m.ops != nil && mixedStep(tokens) {
		return m.forwardSplit(seqs, tokens)
	}
	R, P := 0, 0
	for i, s := range seqs {
		R += len(tokens[i])
		P = max(P, len(s.pages))
	}
	if all && len(seqs) != 1 {
		return nil, errors.New("qwen3: all logits only for one sequence")
	}
	if m.ops != nil && R == len(seqs) && !all {
		// Decode on the ops path: a fixed row length (graph.go), with or
		// without graphs, so that a replayed step and an eager one run
		// the same grids.
		P = max(P, m.graphPages(seqs[0].pool))
	}
	w, err := m.workspace(wsKey{R, len(seqs), P}, all)
	if err != nil {
		return nil, err
	}
	ids, pos, slot, rowSeq := w.tableHost(0)[:0], w.tableHost(1)[:0], w.tableHost(2)[:0], w.tableHost(3)[:0]
	last, table := w.tableHost(4)[:0], w.tableHost(5)
	ctx := 0
	for i, s := range seqs {
		for j, id := range tokens[i] {
			p := s.Len + j
			ids = append(ids, id)
			pos = append(pos, int32(p))
			slot = append(slot, s.slot(p))
			rowSeq = append(rowSeq, int32(i))
		}
		last = append(last, int32(len(ids)-1))
		copy(table[i*P:], s.pages)
		ctx = max(ctx, s.Len+len(tokens[i]))
	}
	var st *opsStep
	if m.ops != nil {
		st = &opsStep{ctx: ctx, seqLens: w.tableHost(6)[:0], cuQ: w.tableHost(7)[:1], cuK: w.tableHost(8)[:1]}
		for i, s := range seqs {
			n := s.Len + len(tokens[i])
			st.maxQ = max(st.maxQ, len(tokens[i]))
			st.seqLens = append(st.seqLens, int32(n))
			st.cuQ = append(st.cuQ, st.cuQ[i]+int32(len(tokens[i])))
			st.cuK = append(st.cuK, st.cuK[i]+int32(n))
			if R != len(seqs) { // prefill: FlashAttention reads the keys gathered
				for j := 0; j < n; j++ {
					st.kvSlots = append(st.kvSlots, s.slot(j))
				}
			}
		}
	}
	if st != nil && m.viaGraph(w, all) && !GraphCopiesOff {
		st.upload = true // inside the step's graph
	} else if err := w.tables.CopyFrom(w.hostTables.Data()); err != nil {
		return nil, fmt.Errorf("qwen3: batch tables: %w", err)
	}
	m.lastCand = nil
	if m.ops != nil {
		st.pick = m.candK > 0 && R == len(seqs) && !all
		err = m.opsForward(seqs[0].pool, w, st, all)
		if err == nil && st.pick {
			if !m.viaGraph(w, all) {
				// An eager step's copy is queued on the device.
				err = m.dev.Sync()
			}
			m.lastCand = w.candHost.Data()
		}
	} else {
		err = m.layersForward(seqs[0].pool, w, ctx, all)
	}
	if err != nil {
		return nil, err
	}
	for i, s := range seqs {
		s.Len += len(tokens[i])
	}
	if all {
		return w.logits, nil
	}
	return w.logitsLast, nil
}

// embedRows writes the rows' embeddings to w.x (float32).
func (m *Model) embedRows(w *workspace) error {
	cfg, q := m.Config, m.queue()
	R, H := w.R, cfg.HiddenSize
	switch {
	case w.emb16 != nil:
		if err := ops.Embedding(q, w.emb16, m.embed.bf16, w.ids, cfg.VocabSize, H); err != nil {
			return err
		}
		return ops.Cast(q, w.x, w.emb16, R*H)
	case w.emb16h != nil:
		if err := ops.Embedding(q, w.emb16h, m.embed.f16, w.ids, cfg.VocabSize, H); err != nil {
			return err
		}
		return ops.Cast(q, w.x, w.emb16h, R*H)
	}
	return ops.Embedding(q, w.x, m.embed.f32, w.ids, cfg.VocabSize, H)
}

// queue is where the forward pass launches: the device, or the stream a
// decode graph is being captured on.
func (m *Model) queue() kern.Queue {
	if m.capture != nil {
		return m.capture
	}
	return m.dev
}

func (m *Model) trace(stage string, layer int, x *kern.Buffer[float32], rows, cols int) error {
	if m.Trace == nil {
		return nil
	}
	return m.Trace(stage, layer, x, rows, cols)
}

// layersForward is the pass itself; errors name the layer and the step.
// ctx is the longest sequence after this step (the scores' row stride).
func (m *Model) layersForward(pool *KVPool, w *workspace, ctx int, all bool) error {
	cfg := m.Config
	R, S, H, D := w.R, w.S, cfg.HiddenSize, cfg.HeadDim
	eps := float32(cfg.RMSNormEps)
	q := m.queue()
	step := func(layer int, what string, err error) error {
		if err == nil {
			return nil
		}
		if layer < 0 {
			return fmt.Errorf("qwen3: %s: %w", what, err)
		}
		return fmt.Errorf("qwen3: layer %d: %s: %w", layer, what, err)
	}

	if err := step(-1, "embedding", m.embedRows(w)); err != nil {
		return err
	}
	if err := m.trace("embed", -1, w.x, R, H); err != nil {
		return err
	}
	scores, err := m.scratch(R * cfg.NumAttentionHeads * ctx)
	if err != nil {
		return err
	}
	scale := float32(1 / math.Sqrt(float64(D)))
	ratio := math.Pow(cfg.RopeTheta, -2/float64(D))
	kv := cfg.KVDim()
	for i, y := range m.layers {
		s := func(what string, err error) error { return step(i, what, err) }
		tr := func(stage string, x *kern.Buffer[float32], cols int) error { return m.trace(stage, i, x, R, cols) }
		if err := s("input_layernorm", ops.RMSNorm(q, w.h, w.x, y.inNorm, R, H, eps)); err != nil {
			return err
		}
		if err := tr("attn_norm", w.h, H); err != nil {
			return err
		}
		// RoPE reads q and k from qr and kr: QK-norm writes them there;
		// without QK-norm (Llama) the projections do.
		qOut, kOut := w.q, w.k
		if y.qNorm == nil {
			qOut, kOut = w.qr, w.kr
		}
		for _, p := range []struct {
			out *kern.Buffer[float32]
			w   *Weight
		}{{qOut, y.q}, {kOut, y.k}, {w.v, y.v}} {
			if err := s("projection", m.Matmul.MatmulT(q, p.out, w.h, p.w, R)); err != nil {
				return err
			}
		}
		if y.qNorm != nil {
			if err := s("q_norm", ops.HeadRMSNorm(q, w.qr, w.q, y.qNorm, R, cfg.NumAttentionHeads, D, eps)); err != nil {
				return err
			}
			if err := s("k_norm", ops.HeadRMSNorm(q, w.kr, w.k, y.kNorm, R, cfg.NumKeyValueHeads, D, eps)); err != nil {
				return err
			}
		}
		if err := s("rope q", ropeRowsKernel.Launch(q, kern.Cover(R*cfg.QDim()/2), w.q, w.qr, w.pos, cfg.NumAttentionHeads, D, ratio)); err != nil {
			return err
		}
		if err := s("rope k", ropeRowsKernel.Launch(q, kern.Cover(R*kv/2), w.k, w.kr, w.pos, cfg.NumKeyValueHeads, D, ratio)); err != nil {
			return err
		}
		for _, p := range []struct {
			stage string
			x     *kern.Buffer[float32]
			cols  int
		}{{"q", w.q, cfg.QDim()}, {"k", w.k, kv}, {"v", w.v, kv}} {
			if err := tr(p.stage, p.x, p.cols); err != nil {
				return err
			}
		}
		if err := s("cache K", kvWriteKernel.Launch(q, kern.Cover(R*kv), pool.k[i], w.k, w.slot, kv)); err != nil {
			return err
		}
		if err := s("cache V", kvWriteKernel.Launch(q, kern.Cover(R*kv), pool.v[i], w.v, w.slot, kv)); err != nil {
			return err
		}
		grid := kern.Blocks(gpu.Dim3{X: R * cfg.NumAttentionHeads, Y: 1, Z: 1}, gpu.Dim3{X: 32, Y: 1, Z: 1})
		err := attentionPagedKernel.Launch(q, grid, w.a, w.q, pool.k[i], pool.v[i], scores, w.pos, w.rowSeq, w.table,
			cfg.NumAttentionHeads, cfg.NumKeyValueHeads, D, w.P, pool.PageSize, ctx, scale)
		if err := s("attention", err); err != nil {
			return err
		}
		if err := tr("attn", w.a, cfg.QDim()); err != nil {
			return err
		}
		if err := s("o_proj", m.Matmul.MatmulT(q, w.o, w.a, y.o, R)); err != nil {
			return err
		}
		if err := s("o_proj all-reduce", m.allReduce(w.o)); err != nil {
			return err
		}
		// x2 = x + o; h = RMSNorm(x2)
		if err := s("post_attention_layernorm", ops.AddRMSNorm(q, w.h, w.x2, w.x, w.o, y.postNorm, R, H, eps)); err != nil {
			return err
		}
		if err := tr("attn_res", w.x2, H); err != nil {
			return err
		}
		if err := tr("mlp_norm", w.h, H); err != nil {
			return err
		}
		if err := s("gate_proj", m.Matmul.MatmulT(q, w.gate, w.h, y.gate, R)); err != nil {
			return err
		}
		if err := s("up_proj", m.Matmul.MatmulT(q, w.up, w.h, y.up, R)); err != nil {
			return err
		}
		if err := s("silu·up", ops.SiLUMul(q, w.act, w.gate, w.up, R*cfg.IntermediateSize)); err != nil {
			return err
		}
		if err := s("down_proj", m.Matmul.MatmulT(q, w.o, w.act, y.down, R)); err != nil {
			return err
		}
		if err := s("down_proj all-reduce", m.allReduce(w.o)); err != nil {
			return err
		}
		if err := tr("mlp", w.o, H); err != nil {
			return err
		}
		if err := s("residual", ops.Add(q, w.x, w.x2, w.o, R*H)); err != nil {
			return err
		}
		if err := tr("out", w.x, H); err != nil {
			return err
		}
	}
	L, V := cfg.NumHiddenLayers, cfg.VocabSize
	// The last row of each sequence: norm and project S rows.
	if err := step(-1, "last rows", gatherRowsKernel.Launch(q, kern.Cover(S*H), w.hl, w.x, w.lastRow, H)); err != nil {
		return err
	}
	if err := step(-1, "final norm", ops.RMSNorm(q, w.hn, w.hl, m.norm, S, H, eps)); err != nil {
		return err
	}
	if err := step(-1, "lm_head", m.lmHeadT(w.logitsLast, w.hn, S)); err != nil {
		return err
	}
	if !all {
		return nil
	}
	// Every row's logits (tests, scoring a prompt).
	if err := step(-1, "final norm", ops.RMSNorm(q, w.h, w.x, m.norm, R, H, eps)); err != nil {
		return err
	}
	if err := m.trace("norm", L, w.h, R, H); err != nil {
		return err
	}
	if err := step(-1, "lm_head", m.lmHeadT(w.logits, w.h, R)); err != nil {
		return err
	}
	return m.trace("logits", L, w.logits, R, V)
}

// checkStep checks a step's sequences and tokens and reserves the pages
// they need, so that a step fails before it changes anything.
func (m *Model) checkStep(seqs []*Seq, tokens [][]int32) error {
	cfg := m.Config
	seen := map[*Seq]bool{}
	for i, s := range seqs {
		switch {
		case len(tokens[i]) == 0:
			return fmt.Errorf("qwen3: sequence %d of the batch has no tokens", i)
		case s.pool != seqs[0].pool:
			return fmt.Errorf("qwen3: sequence %d of the batch is in another KV pool", i)
		case seen[s]:
			return fmt.Errorf("qwen3: sequence %d appears twice in the batch", i)
		}
		seen[s] = true
		if mp := cfg.MaxPositionEmbeddings; mp > 0 && s.Len+len(tokens[i]) > mp {
			return fmt.Errorf("qwen3: sequence %d: %d positions exceed max_position_embeddings = %d", i, s.Len+len(tokens[i]), mp)
		}
		for j, id := range tokens[i] {
			if id < 0 || int(id) >= cfg.VocabSize {
				return fmt.Errorf("qwen3: token %d (sequence %d, index %d) is outside the vocabulary [0, %d)", id, i, j, cfg.VocabSize)
			}
		}
		if err := s.Reserve(s.Len + len(tokens[i])); err != nil {
			return err
		}
	}
	return nil
}

// mixedStep reports whether a step has both sequences that decode (one
// token) and sequences that prefill (more).
func mixedStep(tokens [][]int32) bool {
	ones := 0
	for _, t := range tokens {
		if len(t) == 1 {
			ones++
		}
	}
	return ones > 0 && ones < len(tokens)
}

// forwardSplit runs a step of the ops path that mixes decoding and
// prefilling sequences as a prefill pass and a decode pass, so that each
// sequence runs the kernels it runs alone (batch invariance, ops.go), and
// returns the logits of both in the batch's order, [len(seqs), vocab].
// The step is checked (checkStep) before either pass runs.
func (m *Model) forwardSplit(seqs []*Seq, tokens [][]int32) (*kern.Buffer[float32], error) {
	V := m.Config.VocabSize
	o := m.ops
	if o.mixed != nil && o.mixed.Len() != len(seqs)*V { // the caller's shape, exactly
		o.mixed.Free()
		o.mixed = nil
	}
	out, err := grow(m.dev, &o.mixed, len(seqs)*V)
	for p := 0; p < 2 && err == nil; p++ {
		_, err = grow(m.dev, &o.mixedAt[p], len(seqs))
	}
	if err != nil {
		return nil, fmt.Errorf("qwen3: logits of a mixed step: %w", err)
	}
	for p, decode := range []bool{false, true} {
		var ss []*Seq
		var ts [][]int32
		var at []int32
		for i, s := range seqs {
			if (len(tokens[i]) == 1) == decode {
				ss, ts, at = append(ss, s), append(ts, tokens[i]), append(at, int32(i))
			}
		}
		logits, err := m.forward(ss, ts, false)
		if err != nil {
			return nil, err
		}
		// Each pass its own row table: the second's copy must not
		// overwrite what the first's scatter may not have read yet.
		rows := make([]int32, o.mixedAt[p].Len())
		copy(rows, at)
		if err := o.mixedAt[p].CopyFrom(rows); err != nil {
			return nil, fmt.Errorf("qwen3: logits of a mixed step: %w", err)
		}
		// Before the next pass, which may free this pass's workspace.
		err = scatterRowsKernel.Launch(m.queue(), kern.Cover(len(at)*V), out, logits, o.mixedAt[p], len(at), V)
		if err != nil {
			return nil, fmt.Errorf("qwen3: logits of a mixed step: %w", err)
		}
	}
	return out, nil
}
