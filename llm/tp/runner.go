package tp

// The engine's view of a split model (engine.Runner): rank 0's KV pool is
// the engine's, and the scheduler keeps its page tables (which pages each
// sequence holds, the prefix cache's shared pages). The other ranks'
// pools are never allocated from: each step, every rank adopts rank 0's
// page table and length for each sequence, runs the step, and detaches
// again. Since every rank writes a position's K and V into the same slot
// of its own pool, the ranks' caches stay aligned without a page
// allocator of their own, and a worker process (worker.go) needs only
// the tables of the step at hand.

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/engine"
	"github.com/gokern/kern/llm/qwen3"
)

// Runner is an engine.Runner over an in-process split model (Load,
// LoadLocal): one goroutine per rank each step.
type Runner struct {
	M     *Model
	pools []*qwen3.KVPool
}

// Runner returns m as an engine.Runner; the Runner owns m from then on.
func (m *Model) Runner() *Runner { return &Runner{M: m} }

// NewKVPool implements engine.Runner: a pool on every rank; rank 0's is
// returned.
func (r *Runner) NewKVPool(pages, pageSize int) (*qwen3.KVPool, error) {
	if r.pools != nil {
		return nil, fmt.Errorf("tp: the runner has a KV pool already")
	}
	var pools []*qwen3.KVPool
	for rank, s := range r.M.Shards {
		p, err := s.NewKVPool(pages, pageSize)
		if err != nil {
			for _, p := range pools {
				p.Free()
			}
			return nil, fmt.Errorf("tp: rank %d: %w", rank, err)
		}
		pools = append(pools, p)
	}
	r.pools = pools
	return pools[0], nil
}

// Forward implements engine.Runner.
func (r *Runner) Forward(seqs []*qwen3.Seq, tokens [][]int32, all bool) (*kern.Buffer[float32], error) {
	if r.pools == nil {
		return nil, fmt.Errorf("tp: Forward before NewKVPool")
	}
	plan := PlanOf(seqs, tokens, all)
	return r.M.onRanks(func(rank int, s *qwen3.Model) (*kern.Buffer[float32], error) {
		if rank == 0 {
			return engine.ForwardOn(s, seqs, tokens, all)
		}
		return plan.Replay(s, r.pools[rank])
	})
}

// Free implements engine.Runner: the pools, the shards, the communicators.
func (r *Runner) Free() {
	for _, p := range r.pools {
		p.Free()
	}
	r.pools = nil
	r.M.Free()
}

// Plan is one step as the ranks other than 0 replay it: per sequence
// its page table and length before the step, and its tokens.
type Plan struct {
	Seqs []PlanSeq
	All  bool // every row's logits (one sequence)
}

// PlanSeq is one sequence of a Plan.
type PlanSeq struct {
	Pages  []int32
	Len    int
	Tokens []int32
}

// PlanOf records a step of rank 0's sequences, whose pages must already
// hold the step's positions.
func PlanOf(seqs []*qwen3.Seq, tokens [][]int32, all bool) Plan {
	p := Plan{All: all, Seqs: make([]PlanSeq, len(seqs))}
	for i, s := range seqs {
		p.Seqs[i] = PlanSeq{Pages: append([]int32(nil), s.Pages()...), Len: s.Len, Tokens: tokens[i]}
	}
	return p
}

// Replay runs the step on one rank's shard over its pool. A plan whose
// sequences lack pages for their tokens is refused rather than let the
// rank take pages of its own (its cache would part from rank 0's).
func (p Plan) Replay(s *qwen3.Model, pool *qwen3.KVPool) (*kern.Buffer[float32], error) {
	seqs := make([]*qwen3.Seq, len(p.Seqs))
	tokens := make([][]int32, len(p.Seqs))
	defer func() {
		for _, q := range seqs {
			if q != nil {
				q.Detach()
			}
		}
	}()
	for i, ps := range p.Seqs {
		if need := ps.Len + len(ps.Tokens); need > len(ps.Pages)*pool.PageSize {
			return nil, fmt.Errorf("tp: step sequence %d: %d positions in %d pages of %d", i, need, len(ps.Pages), pool.PageSize)
		}
		q, err := pool.AdoptSeq(ps.Pages, ps.Len)
		if err != nil {
			return nil, fmt.Errorf("tp: step sequence %d: %w", i, err)
		}
		seqs[i], tokens[i] = q, ps.Tokens
	}
	return engine.ForwardOn(s, seqs, tokens, p.All)
}
