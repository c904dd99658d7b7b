package qwen3

// Page ownership outside a Seq, for a prefix cache above the pool
// (llm/engine): pages taken from the free list and handed to sequences
// that share them read-only. The pool itself keeps no reference counts;
// whoever adopts shared pages must Detach (not Release) the sequence and
// Give each page back once no sequence or cache holds it.

import "fmt"

// Take removes n pages from the free list.
func (p *KVPool) Take(n int) ([]int32, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n > len(p.free) {
		return nil, fmt.Errorf("qwen3: %w: want %d pages, %d are free", ErrPoolFull, n, len(p.free))
	}
	out := append([]int32(nil), p.free[len(p.free)-n:]...)
	p.free = p.free[:len(p.free)-n]
	return out, nil
}

// Give returns pages to the free list.
func (p *KVPool) Give(pages []int32) {
	p.mu.Lock()
	p.free = append(p.free, pages...)
	p.mu.Unlock()
}

// AdoptSeq starts a sequence whose first n positions are already in
// pages (n ≤ len(pages)·PageSize). A forward pass writes only positions
// ≥ n, so pages wholly below n may be shared with other sequences.
func (p *KVPool) AdoptSeq(pages []int32, n int) (*Seq, error) {
	if n < 0 || n > len(pages)*p.PageSize {
		return nil, fmt.Errorf("qwen3: adopt %d positions in %d pages of %d", n, len(pages), p.PageSize)
	}
	return &Seq{pool: p, pages: append([]int32(nil), pages...), Len: n}, nil
}

// Pages returns the sequence's page table (the caller must not modify it).
func (s *Seq) Pages() []int32 { return s.pages }

// Detach empties the sequence and returns its pages without freeing them.
func (s *Seq) Detach() []int32 {
	pages := s.pages
	s.pages, s.Len = nil, 0
	return pages
}
