package engine

// What the engine steps: a Runner. The scheduler owns the paged KV
// cache's bookkeeping (which pages a sequence holds, the prefix cache)
// through the one *qwen3.KVPool the Runner hands it; a Runner with
// several ranks (llm/tp) keeps every other rank's pool in step by
// replaying that pool's page tables, so the engine is the same whether
// the model is on one device, split over goroutines, or split over
// processes.

import (
	"errors"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/qwen3"
)

// Runner runs a model's forward passes for the engine.
type Runner interface {
	// NewKVPool allocates the KV pool the engine's sequences live in
	// (on every rank, for a split model; the one returned is the
	// bookkeeping every rank follows).
	NewKVPool(pages, pageSize int) (*qwen3.KVPool, error)
	// Forward runs one step: sequence i of the pool gets tokens[i] at
	// its next positions (their pages are reserved by the caller). It
	// returns the logits of each sequence's last token,
	// [len(seqs), vocab], or with all (one sequence only) of every
	// token, [len(tokens[0]), vocab]. The buffer belongs to the Runner
	// until the next call.
	Forward(seqs []*qwen3.Seq, tokens [][]int32, all bool) (*kern.Buffer[float32], error)
	// Free releases the model (and, for a split model, its ranks).
	Free()
}

// Single is a Runner over a whole model on one device.
type Single struct{ M *qwen3.Model }

// NewKVPool implements Runner.
func (s Single) NewKVPool(pages, pageSize int) (*qwen3.KVPool, error) {
	return s.M.NewKVPool(pages, pageSize)
}

// Forward implements Runner.
func (s Single) Forward(seqs []*qwen3.Seq, tokens [][]int32, all bool) (*kern.Buffer[float32], error) {
	return ForwardOn(s.M, seqs, tokens, all)
}

// Free implements Runner.
func (s Single) Free() { s.M.Free() }

// ForwardOn is Runner.Forward on one model (a whole one or one rank's
// shard): ForwardBatch, or for all, Forward over the sequence as a Cache
// whose capacity is the pages it holds.
func ForwardOn(m *qwen3.Model, seqs []*qwen3.Seq, tokens [][]int32, all bool) (*kern.Buffer[float32], error) {
	if !all {
		return m.ForwardBatch(seqs, tokens)
	}
	if len(seqs) != 1 || len(tokens) != 1 {
		return nil, errAllOne
	}
	return m.Forward(&qwen3.Cache{Seq: seqs[0], Cap: seqs[0].Cap()}, tokens[0], true)
}

var errAllOne = errors.New("engine: every row's logits only for one sequence")

// forward reserves every sequence's pages for its tokens, then runs the
// step: the page tables are complete before a split model's other ranks
// replay them.
func (e *Engine) forward(seqs []*qwen3.Seq, tokens [][]int32, all bool) (*kern.Buffer[float32], error) {
	for i, s := range seqs {
		if err := s.Reserve(s.Len + len(tokens[i])); err != nil {
			return nil, err
		}
	}
	return e.Model.Forward(seqs, tokens, all)
}
