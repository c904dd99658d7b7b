package tp

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/qwen3"
)

// Model is a Qwen3 model split over ranks in one process: rank r's shard
// on its own device, run by its own goroutine in every Forward.
type Model struct {
	// Config is the whole model's; each shard's is its share.
	Config *qwen3.Config
	Shards []*qwen3.Model
	comms  []Comm
}

// aborter is a communicator that can release ranks blocked in a
// collective when another rank has failed, and be reset once all have
// returned (Local).
type aborter interface {
	Abort(err error)
	Reset()
}

// Load loads the model in dir split over comms (rank r of comms[r]
// onto devs[r]); the degree is len(devs). It checks that the config
// divides before loading anything.
func Load(devs []*kern.Device, comms []Comm, dir string) (*Model, error) {
	if len(devs) == 0 || len(devs) != len(comms) {
		return nil, fmt.Errorf("tp: %d devices for %d ranks", len(devs), len(comms))
	}
	cfg, err := qwen3.LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	if _, err := qwen3.ShardConfig(cfg, len(devs)); err != nil {
		return nil, err
	}
	m := &Model{Config: cfg, comms: comms}
	for r, dev := range devs {
		if comms[r].Rank() != r || comms[r].Size() != len(devs) {
			m.Free()
			return nil, fmt.Errorf("tp: comms[%d] is rank %d of %d", r, comms[r].Rank(), comms[r].Size())
		}
		s, err := qwen3.LoadShard(dev, dir, comms[r], qwen3.LoadOptions{})
		if err != nil {
			m.Free()
			return nil, err
		}
		m.Shards = append(m.Shards, s)
	}
	return m, nil
}

// LoadLocal loads the model in dir over devs with an in-process
// communicator (Local): tensor parallelism without NCCL, on any devices.
func LoadLocal(devs []*kern.Device, dir string) (*Model, error) {
	locals, err := NewLocal(len(devs))
	if err != nil {
		return nil, err
	}
	comms := make([]Comm, len(locals))
	for i, l := range locals {
		comms[i] = l
	}
	return Load(devs, comms, dir)
}

// Degree is the number of ranks.
func (m *Model) Degree() int { return len(m.comms) }

// Cache is one sequence's KV cache: each rank's cache holds its own KV
// heads.
type Cache struct{ ranks []*qwen3.Cache }

// NewCache allocates a cache of capacity positions on every rank.
func (m *Model) NewCache(capacity int) (*Cache, error) {
	c := &Cache{}
	for r, s := range m.Shards {
		rc, err := s.NewCache(capacity)
		if err != nil {
			c.Free()
			return nil, fmt.Errorf("tp: rank %d: %w", r, err)
		}
		c.ranks = append(c.ranks, rc)
	}
	return c, nil
}

// Len is the number of cached positions.
func (c *Cache) Len() int { return c.ranks[0].Len }

// Free releases every rank's cache.
func (c *Cache) Free() {
	for _, rc := range c.ranks {
		rc.Free()
	}
	c.ranks = nil
}

// Forward runs tokens through every rank at once, as qwen3.Model.Forward
// does for a whole model, and returns rank 0's copy of the logits (every
// rank holds the same after the LM head's all-gather).
func (m *Model) Forward(c *Cache, tokens []int32, all bool) (*kern.Buffer[float32], error) {
	if len(c.ranks) != len(m.Shards) {
		return nil, fmt.Errorf("tp: a cache of %d ranks for a model of %d", len(c.ranks), len(m.Shards))
	}
	return m.onRanks(func(r int, s *qwen3.Model) (*kern.Buffer[float32], error) {
		return s.Forward(c.ranks[r], tokens, all)
	})
}

// onRanks runs fn for every rank in its own goroutine and returns rank
// 0's result. A rank that fails aborts the clique (when its communicator
// can) so the others return instead of waiting in a collective; the
// error reported is the first rank's own, not the aborted collectives',
// and the clique is reset for the next step (a full KV pool is an
// ordinary error a server retries after).
func (m *Model) onRanks(fn func(r int, s *qwen3.Model) (*kern.Buffer[float32], error)) (*kern.Buffer[float32], error) {
	out := make([]*kern.Buffer[float32], len(m.Shards))
	errs := make([]error, len(m.Shards))
	var wg sync.WaitGroup
	for r, s := range m.Shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[r], errs[r] = fn(r, s)
			if errs[r] != nil {
				if a, ok := m.comms[r].(aborter); ok {
					a.Abort(errs[r])
				}
			}
		}()
	}
	wg.Wait()
	if errors.Join(errs...) != nil {
		// Every rank has returned: the clique can run the next step.
		for _, c := range m.comms {
			if a, ok := c.(aborter); ok {
				a.Reset()
			}
		}
	}
	for r, err := range errs {
		if err != nil && !errors.Is(err, ErrAborted) {
			return nil, fmt.Errorf("tp: rank %d: %w", r, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out[0], nil
}

// Free releases every shard and closes the communicators.
func (m *Model) Free() {
	for _, s := range m.Shards {
		s.Free()
	}
	m.Shards = nil
	for _, c := range m.comms {
		c.Close()
	}
}
