package sample

// Ordering the candidates without sorting the vocabulary. A filter that
// needs the candidates in descending order (top-k, top-p) once sorted
// all of them: 150k tokens through sort.Slice is tens of milliseconds a
// token on the host, ten times a GPU's whole decode step. Neither filter
// needs the whole order:
//
//   - top-k keeps k tokens: a bounded heap picks them in O(V log k), then
//     only those k are sorted. The result is exactly the first k of the
//     full sort (same comparator, ties to the lower id), and everything
//     after it (the sums, top-p, min-p, the draw) sees the same numbers in
//     the same order.
//   - top-p alone keeps the fewest largest tokens whose mass reaches
//     TopP. With the weights w = e^(x - max) and their sum known, the
//     tokens with w ≥ e^-span are sorted, the span starting at 8 and
//     doubling until their mass reaches TopP of the sum: the nucleus is a
//     prefix of them (everything else is lighter), and if rounding leaves
//     the walk short, the rest is sorted too. The kept set is the full
//     sort's; the sum is taken in id order, where a full sort took it in
//     the sorted order, so its last bits may differ.
//
// Weights order the tokens as their logits do, ties included: float32
// logits that differ give float64 weights that differ (until exp
// underflows, and such tokens weigh nothing).

import (
	"container/heap"
	"math"
	"sort"
)

// before is the candidates' order: larger first, ties to the lower id.
func before(x []float64, a, b int32) bool {
	return x[a] > x[b] || x[a] == x[b] && a < b
}

// sortCandidates sorts idx in place by before.
func sortCandidates(x []float64, idx []int32) {
	sort.Slice(idx, func(i, j int) bool { return before(x, idx[i], idx[j]) })
}

// topK returns the k first of idx in before's order, sorted (k < len(idx)).
func topK(x []float64, idx []int32, k int) []int32 {
	h := &minHeap{x: x, ids: make([]int32, 0, k)}
	for _, i := range idx {
		if len(h.ids) < k {
			heap.Push(h, i)
		} else if before(x, i, h.ids[0]) {
			h.ids[0] = i
			heap.Fix(h, 0)
		}
	}
	out := h.ids
	sortCandidates(x, out)
	return append(idx[:0], out...)
}

// minHeap holds the k best ids seen, the worst (last in before's order)
// at the root.
type minHeap struct {
	x   []float64
	ids []int32
}

func (h *minHeap) Len() int           { return len(h.ids) }
func (h *minHeap) Less(a, b int) bool { return before(h.x, h.ids[b], h.ids[a]) }
func (h *minHeap) Swap(a, b int)      { h.ids[a], h.ids[b] = h.ids[b], h.ids[a] }
func (h *minHeap) Push(v any)         { h.ids = append(h.ids, v.(int32)) }
func (h *minHeap) Pop() any {
	v := h.ids[len(h.ids)-1]
	h.ids = h.ids[:len(h.ids)-1]
	return v
}

// nucleusOrder reorders idx (weights w, summing to z) so that the
// heaviest candidates come first, sorted, enough of them to hold mass tp
// of z, and returns how many they are; the rest follow unsorted.
func nucleusOrder(w []float64, idx []int32, z, tp float64) int {
	near := len(idx)
	for span := 8.0; span < 1024; span *= 2 { // e^-1024 is 0: all
		thr, mass := math.Exp(-span), 0.0
		near = 0
		for j, i := range idx {
			if w[i] >= thr {
				idx[near], idx[j] = idx[j], idx[near]
				near++
				mass += w[i]
			}
		}
		if mass >= tp*z {
			break
		}
	}
	sortCandidates(w, idx[:near])
	return near
}
