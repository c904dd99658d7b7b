package qwen3

// The decode step as a graph (kern.Graph: a CUDA graph on a GPU, a
// recorded launch list on the emulator and in native mode). A decode
// step of a steady batch launches the same kernels on the same buffers
// every time; only the contents of the small tables (token ids,
// positions, slots, page tables, lengths) change, and the graph's first
// node copies those from page-locked host memory (kern.HostBuffer) as
// the replay reaches it. So each batch shape (rows, sequences)
// is run once eagerly (ops may allocate on a first call, which a CUDA
// capture must not do), captured on its second step, and replayed from
// then on, saving the host cost of ~15 launches per layer.
//
// What makes that sound on the ops path: no launch of a decode step
// takes a scalar that changes between steps: the page table's row length
// is fixed at the most pages a sequence can hold (graphPages) instead of
// the batch's longest table, and PagedAttention's split-K grid is sized
// by that capacity, not by the longest sequence (splits past a
// sequence's end return at once). Eager decode steps on the ops path use
// the same sizes, so a replayed step computes exactly what an eager one
// does. The float32
// path's attention kernel takes the context length as a scalar, so it
// is not captured.

import (
	"errors"
	"fmt"

	"github.com/gokern/kern"
)

// EnableGraphs makes Forward replay a captured graph for the decode
// steps of the ops path (UseOps first). Steps with Trace set, or asking
// for every row's logits, run eagerly.
func (m *Model) EnableGraphs() error {
	if m.ops == nil {
		return errors.New("qwen3: EnableGraphs: decode graphs need the ops path (UseOps)")
	}
	if m.stream == nil {
		s, err := m.dev.NewStream()
		if err != nil {
			return fmt.Errorf("qwen3: EnableGraphs: %w", err)
		}
		m.stream = s
	}
	m.graphs = true
	return nil
}

// GraphReplays is the number of decode steps replayed from a graph.
func (m *Model) GraphReplays() int { return m.replays }

// graphPages is the page-table row length of a graph-captured step:
// the most pages one sequence of the pool can hold.
func (m *Model) graphPages(pool *KVPool) int {
	p := pool.Pages
	if mp := m.Config.MaxPositionEmbeddings; mp > 0 {
		p = min(p, (mp+pool.PageSize-1)/pool.PageSize)
	}
	return p
}

// replay runs a decode step through w's graph: eagerly on the shape's
// first step, captured (then replayed) on its second.
func (m *Model) replay(w *workspace, run func() error) error {
	if w.graph == nil {
		if !w.warm {
			w.warm = true
			if err := run(); err != nil {
				return err
			}
			// Its tables' copy from host memory is queued; the next
			// step refills that memory.
			return m.dev.Sync()
		}
		g, err := m.stream.Capture(func(s *kern.Stream) error {
			m.capture = s
			defer func() { m.capture = nil }()
			return run()
		})
		if err != nil {
			return fmt.Errorf("qwen3: capturing the decode step of %d sequences: %w", w.S, err)
		}
		w.graph = g
	}
	if err := w.graph.Launch(m.stream); err != nil {
		return fmt.Errorf("qwen3: decode graph of %d sequences: %w", w.S, err)
	}
	if err := m.stream.Sync(); err != nil {
		return fmt.Errorf("qwen3: decode graph of %d sequences: %w", w.S, err)
	}
	m.replays++
	return nil
}
