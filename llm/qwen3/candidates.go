package qwen3

// Each decode step's candidates, picked inside the step. The engine draws
// a token from a row's largest logits (llm/engine/candidates.go); picking
// them in the step's own launches (ops.TopKPacked after lm_head) and
// copying them to page-locked host memory in the same graph leaves a
// token one graph launch and one sync, where a pick after the step is a
// launch and a copy of its own, each a round trip.

import (
	"fmt"
	"os"

	"github.com/gokern/kern"
	"github.com/gokern/kern/ops"
)

// GraphCopiesOff keeps a decode graph to its kernels: the step's tables
// are copied before it (synchronously) and no candidates are picked in it
// (SetDecodeCandidates does nothing), as before host buffers. For a
// driver that would refuse the copies in a graph; KERN_GRAPH_COPIES=0 in
// the environment sets it.
var GraphCopiesOff = os.Getenv("KERN_GRAPH_COPIES") == "0"

// SetDecodeCandidates makes each decode step on the ops path also pick
// every row's k largest logits (ops.TopKPacked) and copy them to host
// memory, read with DecodeCandidates after the step; k = 0 stops it (and
// so does GraphCopiesOff).
// Decode graphs captured before are dropped, to be captured again with
// the pick.
func (m *Model) SetDecodeCandidates(k int) error {
	switch {
	case m.ops == nil:
		return fmt.Errorf("qwen3: SetDecodeCandidates: the candidates are picked on the ops path (UseOps)")
	case k < 0 || k > min(ops.TopKMax, m.Config.VocabSize):
		return fmt.Errorf("qwen3: SetDecodeCandidates(%d): want 0 ≤ k ≤ %d", k, min(ops.TopKMax, m.Config.VocabSize))
	}
	if GraphCopiesOff {
		k = 0
	}
	if k == m.candK {
		return nil
	}
	m.candK, m.lastCand = k, nil
	for _, w := range m.ws {
		if w.graph != nil {
			w.graph.Close()
		}
		w.graph, w.warm = nil, false
	}
	return nil
}

// DecodeCandidates returns the last step's candidates, TopKPair-packed,
// k a row (SetDecodeCandidates's), largest first; nil if the last step
// picked none (a prefill, a step of the float32 path, or candidates off).
// They stay valid until the next step.
func (m *Model) DecodeCandidates() (keys []uint64, k int) {
	if m.lastCand == nil {
		return nil, 0
	}
	return m.lastCand, m.candK
}

// pickCandidates launches the step's pick and the copy of its result to
// host memory on q (the step's launches: inside its graph if captured).
func (m *Model) pickCandidates(q kern.Queue, w *workspace) error {
	V := m.Config.VocabSize
	if w.cand == nil || w.cand.Len() != w.S*m.candK {
		if w.cand != nil {
			w.cand.Free()
			w.candHost.Free()
		}
		var err error
		if w.cand, err = kern.Alloc[uint64](m.dev, w.S*m.candK); err == nil {
			w.candHost, err = kern.AllocHost[uint64](m.dev, w.S*m.candK)
		}
		if err != nil {
			return err
		}
	}
	if m.capture == nil && m.stream != nil {
		// The scratch of the graph's stream, made before the capture:
		// a capture must not allocate.
		if err := ops.TopKReserve(m.stream, w.S, V, m.candK); err != nil {
			return err
		}
	}
	if err := ops.TopKPacked(q, w.cand, w.logitsLast, w.S, V, m.candK); err != nil {
		return err
	}
	return w.cand.CopyToHost(q, w.candHost)
}
