package sample

// Drawing from a row's largest logits alone. A decode step on a GPU can
// hand the host each row's top C logits and their ids (ops.TopK) instead
// of the whole row: 600 KB a sequence at Qwen3's vocabulary, tens of µs
// over PCIe, and then Next's pass over 151,936 floats. For greedy decoding
// and for top-k sampling the candidates decide the draw, token for token
// as Next would make it from the whole row:
//
//   - A repetition penalty > 1 only lowers the logits of seen tokens. A
//     token outside the candidates had a logit no larger than the last
//     candidate's, and comes after it in Next's order (ties to the lower
//     id, which is also ops.TopK's order), so every unseen candidate with
//     a finite logit comes before every token outside, penalized or not.
//   - Greedy picks the first of Next's order: an unseen finite candidate
//     or something before it, so a candidate.
//   - Top-k keeps the first TopK of that order: all candidates when more
//     than TopK candidates are unseen and finite (more than TopK, so that
//     the row also has more than TopK finite tokens, which is when Next
//     applies the filter). Next then works on those TopK alone: their
//     values are the same float64 operations on the same float32 logits,
//     in the same order, so their sums, top-p, min-p and the draw are
//     bit for bit Next's.
//
// Otherwise (a penalty < 1 raises seen tokens, which may sit outside;
// sampling without top-k needs the whole row's mass; too many candidates
// seen or -Inf) NextFrom declines, having used nothing of the random
// stream, and the caller passes the whole row to Next.

import (
	"math"
	"sort"
)

// NextFrom is Next over a row of which only the first len(vals) logits in
// Next's order (larger first, ties to the lower id: ops.TopK's output)
// and their ids are given. ok is false when they do not decide the token
// (the header says when); the sampler's random stream is then untouched.
func (s *Sampler) NextFrom(vals []float32, ids []int32, seen []int32) (tok int32, ok bool) {
	n := len(vals)
	r, on := s.penalty()
	if n == 0 || len(ids) != n || on && r < 1 {
		return -1, false
	}
	var isSeen map[int32]bool
	if on && len(seen) > 0 {
		isSeen = make(map[int32]bool, len(seen))
		for _, id := range seen {
			isSeen[id] = true
		}
	}
	x := s.buf[:0]
	free := 0 // unseen candidates with a finite logit
	for i, v := range vals {
		f := logit64(v)
		if isSeen[ids[i]] {
			f = penalize(f, r)
		} else if !math.IsInf(f, -1) {
			free++
		}
		x = append(x, f)
	}
	s.buf = x
	k := s.p.TopK
	switch {
	case s.p.Temperature == 0 && free >= 1:
	case s.p.Temperature > 0 && k > 0 && free > k:
	default:
		return -1, false
	}
	if t := s.p.Temperature; t > 0 {
		for i := range x {
			x[i] /= t // Next orders the scaled values
		}
	}
	// The candidates in Next's order.
	idx := s.idx[:0]
	for i := range n {
		idx = append(idx, int32(i))
	}
	sort.Slice(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		return x[i] > x[j] || x[i] == x[j] && ids[i] < ids[j]
	})
	s.idx = idx
	if s.p.Temperature == 0 {
		return ids[idx[0]], true
	}
	// The first k in order: filterDraw's sorted prefix is all of them
	// (its ties, broken by slot here, never come up: nothing is sorted
	// after them).
	idx = idx[:k]
	return ids[idx[s.filterDraw(x, idx, x[idx[0]], k)]], true
}

// Greedy reports whether the sampler takes the largest logit with no
// repetition penalty, which the first candidate alone decides.
func (s *Sampler) Greedy() bool {
	_, on := s.penalty()
	return s.p.Temperature == 0 && !on
}
