package ops

// Embedding lookup: gather one row of the table per token id.
//
//	out[t, :] = table[ids[t], :]
//
// Shapes: table [vocab, dim] row-major, ids [n] int32, out [n, dim]; T ∈
// {float32, float16, bfloat16} (a copy, so no arithmetic).
//
// An id outside [0, vocab) is not clamped or wrapped: the kernel indexes
// a view of the table with one element per vocabulary row by the id, so
// kern's device bounds check stops the kernel and the launch returns a
// *kern.DeviceError whose Index is the bad id and whose Length is vocab
// (in native mode, the Go index panic saying the same). A silently
// gathered wrong row would poison everything downstream.
//
// Block: one output element per thread, 256 per block; consecutive
// threads copy consecutive elements of a row, so loads and stores are
// coalesced. (The id is re-read by each thread of a row, from cache.)
//
// Versions: v1 only.

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

//kern:kernel block=256
func embedF32(t gpu.Thread, out, table []float32, ids []int32, dim int) {
	embed(t, out, table, ids, dim)
}

//kern:kernel block=256
func embedF16(t gpu.Thread, out, table []gpu.Half, ids []int32, dim int) {
	embed(t, out, table, ids, dim)
}

//kern:kernel block=256
func embedBF16(t gpu.Thread, out, table []gpu.BFloat16, ids []int32, dim int) {
	embed(t, out, table, ids, dim)
}

func embed[T any](t gpu.Thread, out, table []T, ids []int32, dim int) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	id := int(ids[i/dim])
	vocabRows := table[:len(table)/dim]
	_ = vocabRows[id] // the id check: index id, length vocab
	out[i] = table[id*dim+i%dim]
}

var embedK = kset{embedF32Kernel.Kernel(), embedF16Kernel.Kernel(), embedBF16Kernel.Kernel()}

// Embedding gathers out[t, :] = table[ids[t], :] for each of the
// ids.Len() tokens; table is [vocab, dim] and out [ids.Len(), dim]. An id
// outside [0, vocab) makes the launch fail with the device's bounds error.
func Embedding[T Float](q kern.Queue, out, table *kern.Buffer[T], ids *kern.Buffer[int32], vocab, dim int) error {
	s := newShape("ops.Embedding")
	s.atLeast("vocab", vocab, 1)
	s.atLeast("dim", dim, 1)
	notNil(s, "ids", ids)
	buf(s, "table", table, s.mul(vocab, dim), "vocab×dim")
	if s.err != nil {
		return s.err
	}
	n := ids.Len()
	buf(s, "out", out, s.mul(n, dim), "ids.Len()×dim")
	return elementwise(s, pick[T](embedK), q, n*dim, bufArg(out), bufArg(table), bufArg(ids), intArg(dim))
}
