package tp

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/qwen3"
)

// Batched decoding over the ranks: a Pool is one KV pool per rank, a Seq
// one qwen3.Seq per rank (each rank's pages hold its own KV heads). Page
// allocation is deterministic, so the ranks' page tables stay identical.

// Pool is every rank's KV pool.
type Pool struct{ ranks []*qwen3.KVPool }

// Seq is one sequence on every rank.
type Seq struct{ ranks []*qwen3.Seq }

// NewKVPool allocates pages of pageSize positions on every rank.
func (m *Model) NewKVPool(pages, pageSize int) (*Pool, error) {
	p := &Pool{}
	for r, s := range m.Shards {
		rp, err := s.NewKVPool(pages, pageSize)
		if err != nil {
			p.Free()
			return nil, fmt.Errorf("tp: rank %d: %w", r, err)
		}
		p.ranks = append(p.ranks, rp)
	}
	return p, nil
}

// Free releases every rank's pool.
func (p *Pool) Free() {
	for _, rp := range p.ranks {
		rp.Free()
	}
	p.ranks = nil
}

// NewSeq starts an empty sequence on every rank.
func (p *Pool) NewSeq() *Seq {
	s := &Seq{}
	for _, rp := range p.ranks {
		s.ranks = append(s.ranks, rp.NewSeq())
	}
	return s
}

// Len is the number of positions the sequence holds.
func (s *Seq) Len() int { return s.ranks[0].Len }

// Release returns the sequence's pages on every rank.
func (s *Seq) Release() {
	for _, rs := range s.ranks {
		rs.Release()
	}
}

// ForwardBatch is qwen3.Model.ForwardBatch on every rank at once: one
// step for several sequences of one pool, returning rank 0's logits of
// each sequence's last token, [len(seqs), vocab].
func (m *Model) ForwardBatch(seqs []*Seq, tokens [][]int32) (*kern.Buffer[float32], error) {
	return m.onRanks(func(r int, s *qwen3.Model) (*kern.Buffer[float32], error) {
		rs := make([]*qwen3.Seq, len(seqs))
		for i, q := range seqs {
			if len(q.ranks) != len(m.Shards) {
				return nil, fmt.Errorf("sequence %d has %d ranks, the model %d", i, len(q.ranks), len(m.Shards))
			}
			rs[i] = q.ranks[r]
		}
		return s.ForwardBatch(rs, tokens)
	})
}
